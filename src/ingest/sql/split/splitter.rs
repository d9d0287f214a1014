//! The splitter: a script (or a procedure body) into statements, token by token. It keeps the
//! state of the statement being read (parenthesis, `CASE` and block depth, whether a query or a
//! `SET` was seen, whether it is a routine) and decides at each word whether a new statement
//! starts there (see the parent module for the rules).

use crate::ingest::sql::lexer::{Kind, Lexer, Token};
use crate::ingest::sql::Dialect;

use super::{one_of, upper};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Script,
    Body,
}

/// Previous tokens after which a statement keyword continues the statement.
const CONTINUES_AFTER: &[&str] = &[
    "BULK",
    "THEN",
    "ON",
    "FOR",
    "DO",
    "KEY",
    "OR",
    "AFTER",
    "BEFORE",
    "OF",
    "INSTEAD",
    "AS",
    "ROW",
    "EACH",
    "STATEMENT",
    "NOT",
    ",",
    "(",
    "EXPLAIN",
    "ANALYZE",
    "VERBOSE",
    "UNION",
    "ALL",
    "DISTINCT",
    "EXCEPT",
    "INTERSECT",
    "MINUS",
    "BY",
    "IMMEDIATE",
    "WITH",
    "GRANT",
    "REVOKE",
    "CHARACTER",
    "=",
    "INTO",
    "TO",
    "ELSE",
    "IS",
    "TABLE",
];

/// Previous tokens after which a query keyword continues the statement.
const QUERY_CONTINUES_AFTER: &[&str] = &[
    "UNION",
    "ALL",
    "DISTINCT",
    "EXCEPT",
    "INTERSECT",
    "MINUS",
    "AS",
    "FOR",
    "(",
    ",",
    "=",
    "EXPLAIN",
    "ANALYZE",
    "VERBOSE",
    "BY",
    "IMMEDIATE",
    "IN",
    "INTO",
    "TABLE",
];

/// First keywords of statements that take a query after them.
const TAKES_QUERY: &[&str] = &[
    "INSERT", "REPLACE", "UPSERT", "CREATE", "WITH", "EXPLAIN", "DECLARE", "CACHE", "FROM", "PREPARE", "COPY",
    "UNLOAD", "MERGE",
];

const STARTS: &[&str] = &[
    "CREATE", "DROP", "ALTER", "TRUNCATE", "GRANT", "REVOKE", "USE", "COPY", "UNLOAD", "CALL", "EXEC", "EXECUTE",
    "DECLARE", "SET", "COMMIT", "ROLLBACK", "BEGIN", "MSCK", "VACUUM", "CACHE", "UNCACHE", "COMMENT", "SHOW",
    "DESCRIBE", "LOAD",
];

const TSQL_STARTS: &[&str] = &[
    "IF",
    "ELSE",
    "WHILE",
    "RETURN",
    "PRINT",
    "RAISERROR",
    "THROW",
    "WAITFOR",
    "OPEN",
    "CLOSE",
    "DEALLOCATE",
    "FETCH",
];

struct Splitter<'s> {
    src: &'s str,
    toks: Vec<Token>,
    dialect: Dialect,
    mode: Mode,
    out: Vec<(usize, String)>,
    // The current statement.
    start: Option<usize>,
    end: usize,
    first: String,
    n_tok: usize,
    depth: i32,
    case_depth: usize,
    block_depth: usize,
    routine: bool,
    /// Oracle `CREATE PROCEDURE p IS <declarations>; BEGIN`: the `;`s before the block are its own.
    awaiting_block: bool,
    /// Oracle `CREATE PACKAGE [BODY] p AS|IS ... END p;`: 0 no package, 1 a package before its
    /// `AS`, 2 inside it (the `AS` opened a block that the last `END` closes).
    package: u8,
    batch: bool,
    seen_query: bool,
    pending_update: bool,
    multi_insert: bool,
    prev: String,
}

pub(super) fn split(src: &str, dialect: Dialect, mode: Mode) -> Vec<(usize, String)> {
    let toks: Vec<Token> = Lexer::new(src, dialect).collect();
    let mut s = Splitter {
        src,
        toks,
        dialect,
        mode,
        out: Vec::new(),
        start: None,
        end: 0,
        first: String::new(),
        n_tok: 0,
        depth: 0,
        case_depth: 0,
        block_depth: 0,
        routine: false,
        awaiting_block: false,
        package: 0,
        batch: false,
        seen_query: false,
        pending_update: false,
        multi_insert: false,
        prev: String::new(),
    };
    s.run();
    s.out
}

impl Splitter<'_> {
    fn flush(&mut self) {
        if let Some(start) = self.start.take() {
            let text = self.src.get(start..self.end).unwrap_or("").trim();
            if !text.is_empty() {
                self.out.push((start, text.to_string()));
            }
        }
        self.first.clear();
        self.n_tok = 0;
        self.depth = 0;
        self.case_depth = 0;
        self.block_depth = 0;
        self.routine = false;
        self.awaiting_block = false;
        self.package = 0;
        self.batch = false;
        self.seen_query = false;
        self.pending_update = false;
        self.multi_insert = false;
        self.prev.clear();
    }

    /// The next significant token after index `i`.
    fn next_sig(&self, i: usize) -> Option<&Token> {
        self.toks.get(i + 1..)?.iter().find(|t| t.significant())
    }

    fn next_is(&self, i: usize, words: &[&str]) -> bool {
        self.next_sig(i).is_some_and(|t| t.kind == Kind::Word && one_of(t.text(self.src), words))
    }

    fn next_is_punct(&self, i: usize, c: u8) -> bool {
        self.next_sig(i).is_some_and(|t| t.is_punct(self.src, c))
    }

    /// Whether only spaces and comments stand between the last newline and token `i`.
    fn line_start(&self, i: usize) -> bool {
        for t in self.toks.get(..i).unwrap_or(&[]).iter().rev() {
            match t.kind {
                Kind::Space => {
                    if t.text(self.src).contains('\n') {
                        return true;
                    }
                }
                Kind::Comment => {
                    if t.text(self.src).starts_with("--") || t.text(self.src).starts_with('#') {
                        return true;
                    }
                }
                _ => return false,
            }
        }
        true
    }

    fn line_end(&self, from: usize) -> usize {
        self.src.get(from..).and_then(|r| r.find('\n')).map(|p| p + from).unwrap_or(self.src.len())
    }

    /// `GO [n]` alone on its line (T-SQL).
    fn is_go(&self, i: usize, t: &Token) -> bool {
        // SQL*Plus ends a PL/SQL block with `/` alone on its line.
        if self.dialect == Dialect::Oracle && t.is_punct(self.src, b'/') && self.line_start(i) {
            let rest = self.src.get(t.end..self.line_end(t.end)).unwrap_or("");
            return rest.trim().is_empty();
        }
        if self.dialect != Dialect::TSql || !t.is_kw(self.src, "GO") || !self.line_start(i) {
            return false;
        }
        let rest = self.src.get(t.end..self.line_end(t.end)).unwrap_or("");
        let rest = rest.split("--").next().unwrap_or("").trim();
        rest.is_empty() || rest.bytes().all(|b| b.is_ascii_digit())
    }

    fn begins_block(&self, i: usize) -> bool {
        !self.next_is(i, &["TRAN", "TRANSACTION", "WORK", "ISOLATION", "READ", "DEFERRABLE", "NOT", "DISTRIBUTED"])
            && !self.next_is_punct(i, b';')
            && self.next_sig(i).is_some()
    }

    fn run(&mut self) {
        let mut delimiter: Option<String> = None;
        let mut skip_until = 0usize;
        let n = self.toks.len();
        let mut i = 0;
        while i < n {
            let t = self.toks[i];
            i += 1;
            if t.start < skip_until || !t.significant() {
                continue;
            }
            let idx = i - 1;
            // MySQL client commands: `DELIMITER //` and statements ended by the custom delimiter.
            if matches!(self.dialect, Dialect::MySql | Dialect::MariaDb)
                && t.is_kw(self.src, "DELIMITER")
                && self.start.is_none()
            {
                let line_end = self.line_end(t.end);
                let d = self.src.get(t.end..line_end).unwrap_or("").trim();
                delimiter = (!d.is_empty() && d != ";").then(|| d.to_string());
                skip_until = line_end;
                continue;
            }
            if let Some(d) = &delimiter {
                if self.src.get(t.start..).is_some_and(|r| r.starts_with(d.as_str())) {
                    skip_until = t.start + d.len();
                    self.flush();
                    continue;
                }
            }
            if self.is_go(idx, &t) {
                self.flush();
                skip_until = self.line_end(t.end);
                continue;
            }
            if t.is_punct(self.src, b';')
                && delimiter.is_none()
                && self.block_depth == 0
                && !self.batch
                && !self.awaiting_block
                && (self.depth <= 0 || self.mode == Mode::Body)
            {
                self.flush();
                continue;
            }
            if t.kind == Kind::Word && self.start.is_some() && self.boundary_before(idx, &t, delimiter.is_some()) {
                self.flush();
            }
            self.take(idx, &t);
            if self.mode == Mode::Body && self.boundary_after(&t) {
                self.flush();
            }
        }
        self.flush();
    }

    /// Whether word token `t` starts a new statement.
    fn boundary_before(&self, i: usize, t: &Token, custom_delimiter: bool) -> bool {
        if self.depth > 0
            || self.case_depth > 0
            || self.block_depth > 0
            || self.batch
            || self.awaiting_block
            || custom_delimiter
        {
            return false;
        }
        let w = t.text(self.src);
        if self.mode == Mode::Body {
            if one_of(w, &["BEGIN", "ELSE", "ELSIF", "ELSEIF", "EXCEPTION", "DECLARE", "END"]) {
                return (!w.eq_ignore_ascii_case("BEGIN") || self.begins_block(i)) && self.prev != "END";
            }
            if w.eq_ignore_ascii_case("LOOP") {
                return self.prev != "END";
            }
            if one_of(w, &["IF", "WHILE", "FOR"]) && self.prev != "END" && !self.next_is_punct(i, b'(') {
                return self.first != "IF" || self.prev == ";";
            }
        } else if self.dialect != Dialect::TSql && !self.line_start(i) {
            return false;
        }
        if one_of(&self.first, &["GRANT", "REVOKE", "DENY"]) {
            return false;
        }
        let prev = self.prev.as_str();
        let ww = upper(w);
        if matches!(ww.as_str(), "SELECT" | "VALUES" | "WITH") {
            if one_of(prev, QUERY_CONTINUES_AFTER) {
                return false;
            }
        } else if one_of(prev, CONTINUES_AFTER) {
            return false;
        }
        match ww.as_str() {
            // T-SQL table hints, `FROM t WITH (NOLOCK)`: a CTE's `WITH` is followed by a name.
            "WITH" if self.next_is_punct(i, b'(') => false,
            "SELECT" | "VALUES" | "WITH" => {
                if self.multi_insert || self.first == "FROM" {
                    return false;
                }
                // T-SQL `ELSE INSERT ... SELECT|VALUES`: the query belongs to the statement.
                self.seen_query || !(one_of(&self.first, TAKES_QUERY) || self.first == "ELSE")
            }
            "INSERT" | "UPDATE" | "DELETE" | "MERGE" | "UPSERT" | "REPLACE" => {
                if self.next_is_punct(i, b'(') || self.first == "FROM" {
                    return false;
                }
                self.first != "WITH" || self.seen_query
            }
            "SET" => !self.pending_update && !one_of(&self.first, &["ALTER", "INSERT", "REPLACE", "CREATE", "MERGE"]),
            "DROP" | "ALTER" => self.first != "ALTER",
            "USE" => !self.next_is(i, &["INDEX", "KEY"]),
            "COPY" => !self.next_is(i, &["GRANTS"]),
            "LOAD" => self.next_is(i, &["DATA"]),
            "COMMENT" => self.next_is(i, &["ON"]),
            // The body of `CREATE PROCEDURE p() BEGIN ... END` without `AS` (BigQuery) on a line
            // of its own belongs to the routine.
            "BEGIN" => {
                let routine_body = self.routine && one_of(&self.first, &["CREATE", "ALTER"]) && self.prev != "END";
                !(one_of(&self.first, &["IF", "WHILE", "ELSE"]) || routine_body)
            }
            "EXEC" | "EXECUTE" => self.first != "INSERT" || self.seen_query,
            _ if one_of(w, STARTS) => true,
            _ if self.dialect == Dialect::TSql && one_of(w, TSQL_STARTS) => {
                !self.next_is_punct(i, b'(') && !self.next_is(i, &["NEXT", "FIRST"])
            }
            _ => false,
        }
    }

    /// Body mode: control words that end the fragment they close (`... THEN`, `BEGIN`, `LOOP`).
    fn boundary_after(&self, t: &Token) -> bool {
        if self.depth > 0 || self.case_depth > 0 || t.kind != Kind::Word {
            return false;
        }
        let w = t.text(self.src);
        if w.eq_ignore_ascii_case("THEN") {
            return one_of(&self.first, &["IF", "ELSIF", "ELSEIF", "WHEN", "EXCEPTION"]);
        }
        if one_of(w, &["BEGIN", "ELSE", "LOOP", "EXCEPTION"]) {
            return self.n_tok == 1 || self.first == "FOR" || self.first == "WHILE";
        }
        false
    }

    /// Adds token `t` to the current statement.
    fn take(&mut self, i: usize, t: &Token) {
        let text = t.text(self.src);
        if self.start.is_none() {
            self.start = Some(t.start);
            self.first = if t.kind == Kind::Word { upper(text) } else { text.to_string() };
            if self.mode == Mode::Script && self.first == "BEGIN" && self.begins_block(i) {
                self.routine = true;
            }
            if self.mode == Mode::Script && self.first == "DECLARE" && self.dialect != Dialect::TSql {
                self.routine = true;
            }
        }
        self.n_tok += 1;
        self.end = t.end;
        if t.kind == Kind::Punct {
            match text {
                "(" => self.depth += 1,
                ")" => self.depth -= 1,
                _ => {}
            }
            self.prev = text.to_string();
            return;
        }
        if t.kind != Kind::Word {
            self.prev = "?".into();
            return;
        }
        let w = upper(text);
        if self.n_tok == 2 && self.first == "INSERT" && (w == "ALL" || w == "FIRST") {
            self.multi_insert = true;
        }
        if self.mode == Mode::Script
            && !self.routine
            && self.n_tok <= 10
            && (self.first == "CREATE" || self.first == "ALTER")
            && matches!(w.as_str(), "PROCEDURE" | "PROC" | "FUNCTION" | "TRIGGER" | "PACKAGE")
        {
            self.routine = true;
            if self.dialect == Dialect::TSql {
                self.batch = true;
            }
        }
        if self.depth <= 0 {
            match w.as_str() {
                "SELECT" | "VALUES" => self.seen_query = true,
                "UPDATE" => self.pending_update = true,
                "SET" => self.pending_update = false,
                _ => {}
            }
        }
        if self.routine && self.dialect == Dialect::Oracle && w == "PACKAGE" && self.package == 0 {
            self.package = 1;
        }
        if self.package == 1 && self.depth <= 0 && (w == "IS" || w == "AS") {
            self.package = 2;
            self.block_depth += 1;
            self.prev = w;
            return;
        }
        if self.routine
            && self.dialect == Dialect::Oracle
            && self.depth <= 0
            && self.block_depth == 0
            && (w == "IS" || w == "AS")
            && self.next_sig(i).is_some_and(|n| !matches!(n.kind, Kind::Dollar | Kind::Str))
        {
            self.awaiting_block = true;
        }
        match w.as_str() {
            "CASE" if self.prev != "END" => self.case_depth += 1,
            "BEGIN" if self.routine && self.mode == Mode::Script && self.begins_block(i) => {
                self.block_depth += 1;
                self.awaiting_block = false;
            }
            "END" => {
                if self.case_depth > 0 {
                    self.case_depth -= 1;
                } else if self.block_depth > 0 && !self.next_is(i, &["IF", "LOOP", "WHILE", "REPEAT", "FOR", "CASE"]) {
                    self.block_depth -= 1;
                }
            }
            _ => {}
        }
        self.prev = w;
    }
}
