//! Scripts into statements, and stored-procedure bodies into the statements that move data.
//!
//! Query logs and procedure definitions arrive as text with several statements in it: `;`, T-SQL's
//! `GO` batch separator, MySQL's `DELIMITER`, or no separator at all (T-SQL scripts often have
//! none). [`split_statements`] cuts on the lexer's tokens so a `;` inside a string, comment or
//! dollar-quoted body never splits. Without a separator a new statement starts at a keyword that
//! cannot continue the current one (`INSERT` after a complete query, `SET` after an `UPDATE ... SET`
//! already had its `SET`, ...); outside T-SQL, where semicolons are the norm, only a keyword that
//! begins a line may start a statement that way, which keeps a valid statement from being cut.
//!
//! A `CREATE PROCEDURE/FUNCTION/TRIGGER` or an anonymous `BEGIN ... END` block stays whole (its
//! body has semicolons of its own); in T-SQL a routine runs to the end of its batch, as T-SQL
//! requires. [`unwrap_procedure`] takes such a statement apart into its name and body, and
//! [`body_statements`] pulls the data-moving statements (seed 003, "Stored Procedure Lineage":
//! extract the statements, keep the lineage-relevant ones) out of a body full of control flow:
//! `IF ... THEN`, `BEGIN`/`END`, loops and exception handlers are cut away, and a fragment is kept
//! from its first `INSERT`/`UPDATE`/`DELETE`/`MERGE`/`CREATE`/`SELECT`/`WITH`/... onwards.

use super::lexer::{Kind, Lexer, Token};
use super::Dialect;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Script,
    Body,
}

/// Splits a script into statements: `(byte offset of the statement's first token, text)`, in order,
/// without the terminating `;`, comment-only pieces dropped.
pub fn split_statements(script: &str, dialect: Dialect) -> Vec<(usize, String)> {
    split(script, dialect, Mode::Script)
}

/// The data-moving statements of a procedure body (see the module comment), offsets into `body`.
pub(crate) fn body_statements(body: &str, dialect: Dialect) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (offset, text) in split(body, dialect, Mode::Body) {
        // Dynamic SQL (`EXECUTE IMMEDIATE '...'`, `EXEC sp_executesql N'...'`) is kept whole: the
        // caller analyses the statement in its literal.
        let mut words = Lexer::new(&text, dialect).filter(|t| t.kind == Kind::Word).map(|t| upper(t.text(&text)));
        let paren =
            Lexer::new(&text, dialect).filter(Token::significant).nth(1).is_some_and(|t| t.is_punct(&text, b'('));
        let first = words.next();
        if paren && matches!(first.as_deref(), Some("EXEC" | "EXECUTE")) {
            out.push((offset, text.trim_end().to_string()));
            continue;
        }
        if let (Some("EXEC" | "EXECUTE"), Some(w)) = (first.as_deref(), words.next()) {
            if w == "IMMEDIATE" || w.ends_with("SP_EXECUTESQL") {
                out.push((offset, text.trim_end().to_string()));
                continue;
            }
        }
        if let Some(cut) = first_dml_keyword(&text, dialect) {
            let piece = text.get(cut..).unwrap_or("").trim_end();
            if !piece.is_empty() {
                out.push((offset + cut, piece.to_string()));
            }
        }
    }
    out
}

const DML_START: &[&str] = &[
    "INSERT", "UPDATE", "DELETE", "MERGE", "CREATE", "WITH", "SELECT", "TRUNCATE", "DROP", "ALTER", "COPY", "UNLOAD",
    "REPLACE", "UPSERT",
];

/// Byte offset of the first statement keyword at parenthesis depth 0 of `text`.
fn first_dml_keyword(text: &str, dialect: Dialect) -> Option<usize> {
    let toks: Vec<Token> = Lexer::new(text, dialect).filter(Token::significant).collect();
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        if t.is_punct(text, b'(') {
            depth += 1;
        } else if t.is_punct(text, b')') {
            depth -= 1;
        } else if depth <= 0 && t.kind == Kind::Word {
            let w = t.text(text);
            if DML_START.iter().any(|k| w.eq_ignore_ascii_case(k)) {
                let call = toks.get(i + 1).is_some_and(|n| n.is_punct(text, b'('));
                if !call {
                    return Some(t.start);
                }
            }
        }
    }
    None
}

fn upper(s: &str) -> String {
    s.to_ascii_uppercase()
}

fn one_of(w: &str, list: &[&str]) -> bool {
    list.iter().any(|k| w.eq_ignore_ascii_case(k))
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

fn split(src: &str, dialect: Dialect, mode: Mode) -> Vec<(usize, String)> {
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
            "BEGIN" => !one_of(&self.first, &["IF", "WHILE", "ELSE"]),
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

/// A routine taken apart by [`procedure_parts`].
pub(crate) struct Routine {
    pub name: String,
    pub body: String,
    pub language: Option<String>,
}

/// Name and body of `CREATE [OR REPLACE | OR ALTER] PROCEDURE/FUNCTION/TRIGGER ...` (or T-SQL
/// `ALTER PROCEDURE`): the body of `AS $$ ... $$`, of `AS '...'`, between `BEGIN` and the final
/// `END`, or everything after `AS`/`IS` (T-SQL, Oracle), with an enclosing `BEGIN ... END` removed.
/// `None` when `sql` is not such a statement.
pub fn unwrap_procedure(sql: &str) -> Option<(String, String)> {
    // Without a dialect: dollar quotes first, then T-SQL's [bracketed] names.
    procedure_parts(sql, Dialect::Ansi).or_else(|| procedure_parts(sql, Dialect::TSql)).map(|r| (r.name, r.body))
}

fn strip_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && matches!((b[0], b[b.len() - 1]), (b'"', b'"') | (b'`', b'`') | (b'[', b']')) {
        s.get(1..s.len() - 1).unwrap_or(s)
    } else {
        s
    }
}

pub(crate) fn procedure_parts(sql: &str, dialect: Dialect) -> Option<Routine> {
    // Dollar quotes are recognised whatever the dialect: a routine body is where they appear.
    let lex_dialect =
        if matches!(dialect, Dialect::TSql | Dialect::MySql | Dialect::MariaDb) { dialect } else { Dialect::Postgres };
    // Most statements are not routines: look at the first words before lexing the rest.
    let mut head = Lexer::new(sql, lex_dialect).filter(Token::significant).take(16);
    let first = head.next()?;
    if !(first.is_kw(sql, "CREATE") || first.is_kw(sql, "ALTER")) {
        return None;
    }
    let kinds: &[&str] = if dialect == Dialect::Oracle {
        &["PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "PACKAGE"]
    } else {
        &["PROCEDURE", "PROC", "FUNCTION", "TRIGGER"]
    };
    if !head.any(|t| t.kind == Kind::Word && one_of(t.text(sql), kinds)) {
        return None;
    }
    let toks: Vec<Token> = Lexer::new(sql, lex_dialect).filter(Token::significant).collect();
    let mut i = 1;
    let mut found = false;
    while i < toks.len().min(16) {
        let t = &toks[i];
        i += 1;
        if t.kind == Kind::Word && one_of(t.text(sql), kinds) {
            found = true;
            if t.is_kw(sql, "PACKAGE") && toks.get(i).is_some_and(|b| b.is_kw(sql, "BODY")) {
                i += 1;
            }
            break;
        }
        if t.kind == Kind::Word && one_of(t.text(sql), &["TABLE", "VIEW", "INDEX", "AS", "SELECT"]) {
            return None;
        }
    }
    if !found {
        return None;
    }
    // IF NOT EXISTS
    while toks.get(i).is_some_and(|t| one_of(t.text(sql), &["IF", "NOT", "EXISTS"]) && t.kind == Kind::Word) {
        i += 1;
    }
    let mut name = String::new();
    while let Some(t) = toks.get(i) {
        match t.kind {
            Kind::Word | Kind::Quoted if name.is_empty() || name.ends_with('.') => {
                name.push_str(strip_quotes(t.text(sql)));
            }
            Kind::Punct if t.is_punct(sql, b'.') && !name.is_empty() => name.push('.'),
            _ => break,
        }
        i += 1;
    }
    if name.is_empty() {
        return None;
    }
    let mut language = None;
    let mut depth = 0i32;
    while let Some(t) = toks.get(i) {
        let text = t.text(sql);
        match t.kind {
            Kind::Punct if text == "(" => depth += 1,
            Kind::Punct if text == ")" => depth -= 1,
            Kind::Dollar if depth <= 0 => {
                return Some(Routine { name, body: dollar_body(text).to_string(), language });
            }
            Kind::Word if depth <= 0 => {
                let prev_execute = i > 0 && toks[i - 1].is_kw(sql, "EXECUTE");
                if text.eq_ignore_ascii_case("LANGUAGE") {
                    language = toks.get(i + 1).map(|l| strip_quotes(l.text(sql)).to_ascii_lowercase());
                } else if one_of(text, &["AS", "IS"]) && !prev_execute {
                    let next = toks.get(i + 1);
                    if let Some(n) = next {
                        if n.kind == Kind::Dollar {
                            // Language may follow the body (`AS $$ ... $$ LANGUAGE plpgsql`).
                            let lang = language.or_else(|| language_after(sql, &toks[i + 2..]));
                            return Some(Routine { name, body: dollar_body(n.text(sql)).to_string(), language: lang });
                        }
                        if n.kind == Kind::Str {
                            let lang = language.or_else(|| language_after(sql, &toks[i + 2..]));
                            return Some(Routine { name, body: unquote_string(n.text(sql)), language: lang });
                        }
                        let rest = sql.get(n.start..).unwrap_or("");
                        return Some(Routine { name, body: strip_block(rest, lex_dialect), language });
                    }
                    return None;
                } else if text.eq_ignore_ascii_case("BEGIN") {
                    let rest = sql.get(t.start..).unwrap_or("");
                    return Some(Routine { name, body: strip_block(rest, lex_dialect), language });
                } else if text.eq_ignore_ascii_case("RETURN") {
                    let rest = sql.get(t.end..).unwrap_or("");
                    return Some(Routine { name, body: rest.trim().to_string(), language });
                } else if text.eq_ignore_ascii_case("ROW")
                    && i >= 2
                    && toks[i - 1].is_kw(sql, "EACH")
                    && toks.get(i + 1).is_some_and(|n| DML_START.iter().any(|k| n.is_kw(sql, k)))
                {
                    // MySQL `... FOR EACH ROW INSERT ...`: a trigger body of one statement.
                    let rest = toks.get(i + 1).and_then(|n| sql.get(n.start..)).unwrap_or("");
                    return Some(Routine { name, body: rest.trim().to_string(), language });
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn language_after(sql: &str, toks: &[Token]) -> Option<String> {
    toks.windows(2).find(|w| w[0].is_kw(sql, "LANGUAGE")).map(|w| strip_quotes(w[1].text(sql)).to_ascii_lowercase())
}

fn dollar_body(text: &str) -> &str {
    let Some(second) = text.get(1..).and_then(|r| r.find('$')) else {
        return text;
    };
    let tag = text.get(..second + 2).unwrap_or("$$");
    let inner = text.get(second + 2..).unwrap_or("");
    inner.strip_suffix(tag).unwrap_or(inner)
}

pub(crate) fn unquote_string(text: &str) -> String {
    let inner = text.strip_prefix('\'').unwrap_or(text);
    let inner = inner.strip_suffix('\'').unwrap_or(inner);
    inner.replace("''", "'").replace("\\'", "'")
}

/// `BEGIN ... END [name] [;]` around the whole text (after declarations, for Oracle's
/// `IS decl BEGIN ... END`) loses the outer pair; anything else is returned trimmed.
fn strip_block(text: &str, dialect: Dialect) -> String {
    let toks: Vec<Token> = Lexer::new(text, dialect).filter(Token::significant).collect();
    let mut end = toks.len();
    // Trailing `;`, `GO`, `/` (Oracle SQL*Plus) and a label after the last END.
    while end > 0 && (toks[end - 1].is_punct(text, b';') || toks[end - 1].is_punct(text, b'/')) {
        end -= 1;
    }
    if end > 0 && toks[end - 1].is_kw(text, "GO") {
        end -= 1;
    }
    let mut last_end = None;
    for k in (end.saturating_sub(3)..end).rev() {
        if toks[k].is_kw(text, "END") {
            last_end = Some(k);
            break;
        }
    }
    let first_begin = toks.iter().position(|t| t.is_kw(text, "BEGIN"));
    match (first_begin, last_end) {
        (Some(b), Some(e)) if b < e => {
            let mut from = toks[b].end;
            if toks.get(b + 1).is_some_and(|t| t.is_kw(text, "ATOMIC")) {
                from = toks[b + 1].end;
            }
            let decl = text.get(..toks[b].start).unwrap_or("");
            let inner = text.get(from..toks[e].start).unwrap_or("");
            if decl.trim().is_empty() {
                inner.trim().to_string()
            } else {
                format!("{};\n{}", decl.trim(), inner.trim())
            }
        }
        _ => text.trim().to_string(),
    }
}

/// Significant tokens of `text` with their parenthesis depth (0 = top level).
fn leveled(text: &str, dialect: Dialect) -> Vec<(Token, i32)> {
    let mut depth = 0i32;
    let mut out = Vec::new();
    for t in Lexer::new(text, dialect).filter(Token::significant) {
        if t.is_punct(text, b')') {
            depth -= 1;
        }
        out.push((t, depth));
        if t.is_punct(text, b'(') {
            depth += 1;
        }
    }
    out
}

/// Clauses that end a select list.
const AFTER_SELECT_LIST: &[&str] =
    &["WHERE", "GROUP", "HAVING", "ORDER", "SORT", "CLUSTER", "DISTRIBUTE", "LIMIT", "WINDOW", "QUALIFY"];

/// Hive/Spark multi-insert, `FROM src INSERT OVERWRITE TABLE a SELECT ... INSERT INTO TABLE b
/// SELECT ...`, which the parser does not take: one `INSERT ... SELECT ... FROM src ...` per
/// insert, the shared `FROM` clause put after each select list. `None` for anything else.
pub(crate) fn multi_insert(text: &str, dialect: Dialect) -> Option<Vec<String>> {
    let toks = leveled(text, dialect);
    let (first, _) = toks.first()?;
    if !first.is_kw(text, "FROM") {
        return None;
    }
    let inserts: Vec<usize> =
        toks.iter().enumerate().filter(|(_, (t, d))| *d == 0 && t.is_kw(text, "INSERT")).map(|(i, _)| i).collect();
    let from_clause = text.get(first.end..toks.get(*inserts.first()?)?.0.start)?.trim();
    let mut out = Vec::with_capacity(inserts.len());
    for (k, &at) in inserts.iter().enumerate() {
        let end_tok = inserts.get(k + 1).copied().unwrap_or(toks.len());
        let seg_start = toks.get(at)?.0.start;
        let seg_end = match toks.get(end_tok) {
            Some((t, _)) => t.start,
            None => text.len(),
        };
        let seg = toks.get(at..end_tok)?;
        let select = seg.iter().position(|(t, d)| *d == 0 && t.is_kw(text, "SELECT"));
        let cut = select.and_then(|s| {
            seg.iter()
                .enumerate()
                .skip(s + 1)
                .find(|(i, (t, d))| {
                    *d == 0
                        && AFTER_SELECT_LIST.iter().any(|kw| t.is_kw(text, kw))
                        && !(t.is_kw(text, "GROUP")
                            && i.checked_sub(1).and_then(|p| seg.get(p)).is_some_and(|(p, _)| p.is_kw(text, "WITHIN")))
                })
                .map(|(_, (t, _))| t.start)
        });
        let piece = match (select, cut) {
            (None, _) => text.get(seg_start..seg_end)?.trim().to_string(),
            (Some(_), Some(c)) => {
                format!("{} FROM {from_clause} {}", text.get(seg_start..c)?.trim_end(), text.get(c..seg_end)?.trim())
            }
            (Some(_), None) => format!("{} FROM {from_clause}", text.get(seg_start..seg_end)?.trim_end()),
        };
        out.push(piece);
    }
    Some(out)
}

/// T-SQL `INSERT [INTO] t [(cols)] EXEC[UTE] proc ...`, which the parser does not take: the
/// statement with the `EXEC` part replaced by `DEFAULT VALUES` (so the target parses), and the
/// procedure called. `None` for anything else.
pub(crate) fn insert_exec(text: &str, dialect: Dialect) -> Option<(String, String)> {
    let toks = leveled(text, dialect);
    if !toks.first()?.0.is_kw(text, "INSERT") {
        return None;
    }
    let at = toks.iter().position(|(t, d)| *d == 0 && (t.is_kw(text, "EXEC") || t.is_kw(text, "EXECUTE")))?;
    let exec = toks.get(at)?.0;
    // The column list would be a lie with DEFAULT VALUES; what lineage there is starts unknown.
    let head_end = toks
        .iter()
        .take(at)
        .position(|(t, d)| *d == 0 && t.is_punct(text, b'('))
        .and_then(|i| toks.get(i))
        .map_or(exec.start, |(t, _)| t.start);
    let head = text.get(..head_end)?.trim_end();
    let called = text.get(exec.end..)?.trim();
    let proc_name = called
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(')
        .find(|w| !w.is_empty() && !w.starts_with('@') && *w != "=")
        .unwrap_or(called)
        .to_string();
    Some((format!("{head} DEFAULT VALUES"), proc_name))
}

/// The dotted name starting at token `i` (words, quoted identifiers and dots), as written.
fn dotted_name(text: &str, toks: &[(Token, i32)], i: usize) -> Option<String> {
    let start = toks.get(i)?.0.start;
    let mut end = start;
    let mut want_part = true;
    for (t, _) in toks.get(i..)? {
        let part = matches!(t.kind, Kind::Word | Kind::Quoted);
        if want_part && part {
            end = t.end;
            want_part = false;
        } else if !want_part && t.is_punct(text, b'.') {
            want_part = true;
        } else {
            break;
        }
    }
    (end > start).then(|| text.get(start..end).map(str::to_string)).flatten()
}

/// The token index of the first top-level keyword `kw` at or after `from`.
fn find_kw(text: &str, toks: &[(Token, i32)], from: usize, kw: &str) -> Option<usize> {
    toks.iter().enumerate().skip(from).find(|(_, (t, d))| *d == 0 && t.is_kw(text, kw)).map(|(i, _)| i)
}

/// Dialect syntax the parser does not take, rewritten to an equivalent it does (for lineage):
///
/// - T-SQL `UPDATE TOP (n) t ...` / `DELETE TOP (n) FROM t ...`: the `TOP (n)` dropped;
/// - MySQL `LOAD DATA [LOCAL] INFILE 'f' ... INTO TABLE t ...` and BigQuery `LOAD DATA INTO t
///   FROM FILES (uris = ['f', ...])`: `LOAD DATA INPATH 'f' INTO TABLE t`;
/// - Snowflake `CREATE [OR REPLACE] EXTERNAL TABLE t (...) LOCATION = @stage/path ...`:
///   `CREATE EXTERNAL TABLE t LOCATION '@stage/path'` (its columns are computed from the files);
/// - Redshift `ALTER TABLE t APPEND FROM s ...`: `INSERT INTO t BY NAME SELECT * FROM s`;
/// - Postgres `CREATE TABLE t (LIKE s INCLUDING ...)`, BigQuery `CREATE TABLE t COPY s` and
///   `CREATE SNAPSHOT TABLE`: see [`create_like_or_copy`];
/// - Spark/Hive `INSERT OVERWRITE DIRECTORY` with a format: see [`overwrite_directory`].
pub(crate) fn rewrite(text: &str, dialect: Dialect) -> Option<String> {
    let toks = leveled(text, dialect);
    match clean(text, &toks, dialect) {
        Some(cleaned) => {
            let toks = leveled(&cleaned, dialect);
            Some(rewrite_one(&cleaned, toks, dialect).unwrap_or(cleaned))
        }
        None => rewrite_one(text, toks, dialect),
    }
}

/// `text` without the spans `cuts` (sorted, not overlapping).
fn without(text: &str, cuts: &[(usize, usize)]) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(a, b) in cuts {
        out.push_str(text.get(at..a)?);
        out.push(' ');
        at = b;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

const TSQL_TABLE_HINTS: &[&str] = &[
    "NOLOCK",
    "HOLDLOCK",
    "TABLOCK",
    "TABLOCKX",
    "ROWLOCK",
    "UPDLOCK",
    "XLOCK",
    "PAGLOCK",
    "READUNCOMMITTED",
    "READCOMMITTED",
    "READCOMMITTEDLOCK",
    "REPEATABLEREAD",
    "SERIALIZABLE",
    "READPAST",
    "NOWAIT",
    "SNAPSHOT",
    "FORCESEEK",
    "FORCESCAN",
    "INDEX",
    "NOEXPAND",
    "KEEPIDENTITY",
    "KEEPDEFAULTS",
    "IGNORE_CONSTRAINTS",
    "IGNORE_TRIGGERS",
];

/// Words that end a time-travel expression (`FOR SYSTEM_TIME AS OF <expr>`).
const AFTER_TABLE: &[&str] = &[
    "WHERE",
    "GROUP",
    "HAVING",
    "ORDER",
    "LIMIT",
    "JOIN",
    "INNER",
    "LEFT",
    "RIGHT",
    "FULL",
    "CROSS",
    "NATURAL",
    "ON",
    "USING",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "MINUS",
    "QUALIFY",
    "WINDOW",
    "AS",
    "LATERAL",
    "PIVOT",
    "UNPIVOT",
    "TABLESAMPLE",
    "OUTER",
    "SELECT",
    "FROM",
];

/// Clauses that change no lineage and that the parser refuses in the dialect, cut out; `None`
/// when there are none:
///
/// - T-SQL query hints `OPTION (...)` and join hints (`INNER LOOP JOIN`, `LEFT HASH JOIN`);
/// - time travel other than BigQuery's and T-SQL's (which parse): Trino/Iceberg `FOR TIMESTAMP|
///   VERSION AS OF x`, Delta `VERSION|TIMESTAMP AS OF x`, `FOR SYSTEM_TIME AS OF x`;
/// - materialized view options between the name and `AS` (Redshift `AUTO REFRESH YES`,
///   `BACKUP NO`, `DISTKEY(...)`) and Postgres's trailing `WITH [NO] DATA`;
/// - Oracle physical attributes of a CTAS (`NOLOGGING PARALLEL 4 COMPRESS ...`);
/// - Delta `INSERT INTO t REPLACE WHERE cond SELECT ...`: the condition (which rows are replaced).
fn clean(text: &str, toks: &[(Token, i32)], dialect: Dialect) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let punct = |i: usize, c: u8| toks.get(i).is_some_and(|(t, _)| t.is_punct(text, c));
    // The index of the `)` closing the `(` at index `open`.
    let close = |open: usize| {
        let depth = toks.get(open)?.1;
        toks.iter().enumerate().skip(open + 1).find(|(_, (t, d))| *d == depth && t.is_punct(text, b')')).map(|(i, _)| i)
    };
    let span = |a: usize, b: usize| Some((toks.get(a)?.0.start, toks.get(b)?.0.end));
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    if word(0, "CREATE") {
        // Oracle `CREATE OR REPLACE FORCE EDITIONABLE VIEW` (as DBMS_METADATA writes it), Trino
        // `CREATE VIEW v SECURITY INVOKER AS`: view options that change no lineage.
        let view = toks.iter().take(8).position(|(t, d)| *d == 0 && t.is_kw(text, "VIEW"));
        if let Some(v) = view {
            for k in 1..v {
                let opt = ["FORCE", "NOFORCE", "EDITIONABLE", "NONEDITIONABLE", "EDITIONING"];
                if opt.iter().any(|o| word(k, o)) {
                    cuts.push(span(k, k)?);
                }
            }
            if let Some(sec) =
                toks.iter().skip(v).position(|(t, d)| *d == 0 && t.is_kw(text, "SECURITY")).map(|p| p + v)
            {
                if (word(sec + 1, "INVOKER") || word(sec + 1, "DEFINER")) && word(sec + 2, "AS") {
                    cuts.push(span(sec, sec + 1)?);
                }
            }
        }
    }
    let create_view = word(0, "CREATE") && toks.iter().take(6).any(|(t, _)| t.is_kw(text, "MATERIALIZED"));
    if create_view {
        let view = toks.iter().position(|(t, _)| t.is_kw(text, "VIEW"))?;
        let mut at = view + 1;
        if word(at, "IF") && word(at + 1, "NOT") && word(at + 2, "EXISTS") {
            at += 3;
        }
        let name = dotted_name(text, toks, at)?;
        let end = toks.get(at)?.0.start + name.len();
        let after = toks.iter().position(|(t, _)| t.start >= end)?;
        let after = if punct(after, b'(') { close(after)? + 1 } else { after };
        let as_kw = find_kw(text, toks, after, "AS")?;
        if as_kw > after {
            cuts.push(span(after, as_kw - 1)?);
        }
        let n = toks.len();
        if n >= 3 && word(n - 1, "DATA") && word(n - 2, "NO") && word(n - 3, "WITH") {
            cuts.push(span(n - 3, n - 1)?);
        } else if n >= 2 && word(n - 1, "DATA") && word(n - 2, "WITH") {
            cuts.push(span(n - 2, n - 1)?);
        }
    } else if dialect == Dialect::Oracle && word(0, "CREATE") {
        let attributes = || {
            let table = toks.iter().take(6).position(|(t, d)| *d == 0 && t.is_kw(text, "TABLE"))?;
            let name = dotted_name(text, toks, table + 1)?;
            let end = toks.get(table + 1)?.0.start + name.len();
            let after = toks.iter().position(|(t, _)| t.start >= end)?;
            let after = if punct(after, b'(') { close(after)? + 1 } else { after };
            let as_kw = find_kw(text, toks, after, "AS")?;
            if as_kw > after && toks.get(as_kw + 1).is_some() {
                return span(after, as_kw - 1);
            }
            None
        };
        cuts.extend(attributes());
    }
    if dialect == Dialect::SparkSql && word(0, "INSERT") {
        if let Some(r) = find_kw(text, toks, 1, "REPLACE").filter(|&r| word(r + 1, "WHERE")) {
            let q = toks
                .iter()
                .enumerate()
                .skip(r + 2)
                .find(|(_, (t, d))| {
                    *d == 0 && (t.is_kw(text, "SELECT") || t.is_kw(text, "WITH") || t.is_kw(text, "FROM"))
                })
                .map(|(i, _)| i)?;
            cuts.push(span(r, q - 1)?);
        }
    }
    if dialect == Dialect::Redshift && word(0, "CREATE") {
        // Column compression, `a int ENCODE zstd`.
        for (i, (t, _)) in toks.iter().enumerate() {
            if t.is_kw(text, "ENCODE") && toks.get(i + 1).is_some_and(|(n, _)| n.kind == Kind::Word) {
                cuts.push(span(i, i + 1)?);
            }
        }
    }
    let time_travel = !matches!(dialect, Dialect::BigQuery | Dialect::TSql);
    let mut i = 0;
    while i < toks.len() {
        let (t, d) = toks.get(i)?;
        let d = *d;
        if t.kind != Kind::Word {
            i += 1;
            continue;
        }
        if dialect == Dialect::TSql {
            if t.is_kw(text, "OPTION") && d == 0 && punct(i + 1, b'(') {
                let c = close(i + 1)?;
                cuts.push(span(i, c)?);
                i = c + 1;
                continue;
            }
            // Table hints, `dbo.t WITH (TABLOCK)`: refused after an INSERT or MERGE target.
            let table_hint = t.is_kw(text, "WITH")
                && punct(i + 1, b'(')
                && i > 0
                && toks.get(i - 1).is_some_and(|(p, _)| matches!(p.kind, Kind::Word | Kind::Quoted))
                && TSQL_TABLE_HINTS.iter().any(|h| word(i + 2, h));
            if table_hint {
                let c = close(i + 1)?;
                cuts.push(span(i, c)?);
                i = c + 1;
                continue;
            }
            let hint = ["LOOP", "HASH", "MERGE", "REMOTE"].iter().any(|h| t.is_kw(text, h));
            let after_join_kind = ["INNER", "OUTER", "LEFT", "RIGHT", "FULL"].iter().any(|k| i > 0 && word(i - 1, k));
            if hint && after_join_kind && word(i + 1, "JOIN") {
                cuts.push(span(i, i)?);
            }
        }
        if time_travel {
            let kinds = ["SYSTEM_TIME", "TIMESTAMP", "VERSION", "SYSTEM_VERSION"];
            let expr_at = if t.is_kw(text, "FOR")
                && kinds.iter().any(|k| word(i + 1, k))
                && word(i + 2, "AS")
                && word(i + 3, "OF")
            {
                Some(i + 4)
            } else if (t.is_kw(text, "VERSION") || t.is_kw(text, "TIMESTAMP"))
                && word(i + 1, "AS")
                && word(i + 2, "OF")
                && i > 0
                && toks.get(i - 1).is_some_and(|(p, _)| matches!(p.kind, Kind::Word | Kind::Quoted))
                && !word(i - 1, "SELECT")
            {
                Some(i + 3)
            } else {
                None
            };
            if let Some(e) = expr_at {
                let lit = |k: usize| toks.get(k).is_some_and(|(x, _)| matches!(x.kind, Kind::Str | Kind::Number));
                let last = if lit(e) {
                    e
                } else if lit(e + 1) && ["TIMESTAMP", "DATE"].iter().any(|k| word(e, k)) {
                    e + 1
                } else {
                    let mut j = e;
                    while let Some((x, xd)) = toks.get(j + 1) {
                        let stop = *xd < d
                            || (*xd == d
                                && (x.is_punct(text, b',')
                                    || x.is_punct(text, b';')
                                    || x.is_punct(text, b')')
                                    || AFTER_TABLE.iter().any(|k| x.is_kw(text, k))));
                        if stop {
                            break;
                        }
                        j += 1;
                    }
                    j
                };
                cuts.push(span(i, last)?);
                i = last + 1;
                continue;
            }
        }
        i += 1;
    }
    if cuts.is_empty() {
        return None;
    }
    cuts.sort_unstable();
    without(text, &cuts)
}

fn rewrite_one(text: &str, toks: Vec<(Token, i32)>, dialect: Dialect) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    if dialect == Dialect::TSql && (word(0, "UPDATE") || word(0, "DELETE")) && word(1, "TOP") {
        let open = toks.get(2).filter(|(t, _)| t.is_punct(text, b'('))?;
        let close = toks.iter().skip(3).find(|(t, d)| *d == 0 && t.is_punct(text, b')'))?;
        let mut rest_start = close.0.end;
        if let Some(i) = toks.iter().position(|(t, _)| t.start >= close.0.end) {
            if word(i, "PERCENT") {
                rest_start = toks.get(i)?.0.end;
            }
        }
        let _ = open;
        return Some(format!("{} {}", toks.first()?.0.text(text), text.get(rest_start..)?.trim_start()));
    }
    if dialect == Dialect::TSql && (word(0, "EXEC") || word(0, "EXECUTE")) {
        let called = dotted_name(text, &toks, 1)?.to_ascii_lowercase();
        if called != "sp_rename" && !called.ends_with(".sp_rename") {
            return None;
        }
        let args: Vec<String> = toks
            .iter()
            .filter(|(t, _)| t.kind == Kind::Str)
            .map(|(t, _)| t.text(text).trim_start_matches(['N', 'n']).trim_matches('\'').to_string())
            .collect();
        // A column or index rename moves no table.
        if args.get(2).is_some_and(|k| !k.eq_ignore_ascii_case("OBJECT")) {
            return None;
        }
        let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || "_.[]#$@\"".contains(c));
        let (old, new) = (args.first().filter(|s| plain(s))?, args.get(1).filter(|s| plain(s))?);
        return Some(format!("ALTER TABLE {old} RENAME TO {new}"));
    }
    if dialect == Dialect::TSql && word(0, "CREATE") {
        // `CREATE VIEW v WITH SCHEMABINDING AS ...`: the view options change no lineage.
        let view = find_kw(text, &toks, 1, "VIEW")?;
        let with = find_kw(text, &toks, view, "WITH")?;
        let opts = ["SCHEMABINDING", "ENCRYPTION", "VIEW_METADATA"];
        if !opts.iter().any(|o| word(with + 1, o)) {
            return None;
        }
        let as_kw = find_kw(text, &toks, with, "AS")?;
        return Some(format!(
            "{} {}",
            text.get(..toks.get(with)?.0.start)?.trim_end(),
            text.get(toks.get(as_kw)?.0.start..)?
        ));
    }
    if matches!(dialect, Dialect::SparkSql | Dialect::Hive) && word(0, "CREATE") {
        // `CREATE TEMPORARY VIEW v USING fmt OPTIONS (path 'p', ...)`: a view of the files at p.
        let view = toks.iter().take(6).position(|(t, _)| t.is_kw(text, "VIEW"));
        if let Some(v) =
            view.filter(|&v| toks.iter().take(v).any(|(t, _)| t.is_kw(text, "TEMPORARY") || t.is_kw(text, "TEMP")))
        {
            if let Some(name) = dotted_name(text, &toks, v + 1) {
                let using = find_kw(text, &toks, v + 1, "USING");
                let path = toks.iter().position(|(t, d)| *d == 1 && t.is_kw(text, "PATH"));
                if let (Some(_), Some(p)) = (using, path) {
                    let p = toks.get(p + 1).filter(|(t, _)| t.kind == Kind::Str)?.0.text(text);
                    let p = p.trim_matches('\'').replace('`', "");
                    return Some(format!("CREATE TEMPORARY VIEW {name} AS SELECT * FROM `{p}`"));
                }
            }
        }
        if let Some(r) = spark_table_clauses(text, &toks) {
            return Some(r);
        }
    }
    if dialect == Dialect::TSql && word(0, "BULK") && word(1, "INSERT") {
        // `BULK INSERT t FROM 'file' WITH (...)`: a load.
        let name = dotted_name(text, &toks, 2)?;
        let from = find_kw(text, &toks, 2, "FROM")?;
        let file = toks.get(from + 1).filter(|(t, _)| t.kind == Kind::Str)?.0.text(text);
        return Some(format!("LOAD DATA INPATH {file} INTO TABLE {name}"));
    }
    if dialect == Dialect::SparkSql && word(0, "COPY") && word(1, "INTO") {
        // Databricks `COPY INTO t FROM 'path' | (SELECT ... FROM 'path') FILEFORMAT = ...`.
        let from = find_kw(text, &toks, 2, "FROM")?;
        let name = text.get(toks.get(2)?.0.start..toks.get(from)?.0.start)?.trim();
        let file = toks.iter().skip(from).find(|(t, _)| t.kind == Kind::Str)?.0.text(text);
        return Some(format!("LOAD DATA INPATH {file} INTO TABLE {name}"));
    }
    if dialect == Dialect::Snowflake && word(0, "CREATE") {
        // `CREATE [OR REPLACE] STREAM s [IF NOT EXISTS] ON TABLE|VIEW t ...`: changes of t, read
        // like a view of it.
        if let Some(k) = toks.iter().take(4).position(|(t, _)| t.is_kw(text, "STREAM")) {
            let mut at = k + 1;
            if word(at, "IF") && word(at + 1, "NOT") && word(at + 2, "EXISTS") {
                at += 3;
            }
            let name = dotted_name(text, &toks, at)?;
            let on = find_kw(text, &toks, at, "ON")?;
            if !(word(on + 1, "TABLE") || word(on + 1, "VIEW")) {
                return None;
            }
            let src = dotted_name(text, &toks, on + 2)?;
            return Some(format!("CREATE VIEW {name} AS SELECT * FROM {src}"));
        }
    }
    if word(0, "LOAD") && word(1, "DATA") {
        let into = find_kw(text, &toks, 2, "INTO")?;
        let (file, table_at) = if let Some(infile) = find_kw(text, &toks, 2, "INFILE") {
            let f = toks.get(infile + 1).filter(|(t, _)| t.kind == Kind::Str)?.0.text(text).to_string();
            (f, if word(into + 1, "TABLE") { into + 2 } else { into + 1 })
        } else if let Some(files) = find_kw(text, &toks, into, "FILES") {
            // The first string in `FILES (...)` is the first URI (or the format; then the next).
            let strs: Vec<&str> =
                toks.iter().skip(files).filter(|(t, _)| t.kind == Kind::Str).map(|(t, _)| t.text(text)).collect();
            let uri = strs.iter().find(|s| s.contains("://")).or(strs.first())?.to_string();
            (uri, if word(into + 1, "TABLE") { into + 2 } else { into + 1 })
        } else {
            return None;
        };
        let name = dotted_name(text, &toks, table_at)?;
        return Some(format!("LOAD DATA INPATH {file} INTO TABLE {name}"));
    }
    if word(0, "ALTER") && word(1, "TABLE") {
        // Redshift `ALTER TABLE t APPEND FROM s [IGNOREEXTRA | FILLTARGET]`: moves s's rows into
        // t, matching columns by name.
        let name = dotted_name(text, &toks, 2)?;
        let end = toks.get(2)?.0.start + name.len();
        let at = toks.iter().position(|(t, _)| t.start >= end)?;
        if !(word(at, "APPEND") && word(at + 1, "FROM")) {
            return None;
        }
        let from = dotted_name(text, &toks, at + 2)?;
        return Some(format!("INSERT INTO {name} BY NAME SELECT * FROM {from}"));
    }
    if word(0, "CREATE") {
        if let Some(r) = create_like_or_copy(text, &toks).or_else(|| ctas_column_names(text, &toks)) {
            return Some(r);
        }
        // Postgres `CREATE [OR REPLACE] RECURSIVE VIEW v (cols) AS q`, by its definition:
        // `CREATE VIEW v AS WITH RECURSIVE v (cols) AS (q) SELECT * FROM v`.
        if let Some(r) =
            toks.iter().take(4).position(|(t, _)| t.is_kw(text, "RECURSIVE")).filter(|&r| word(r + 1, "VIEW"))
        {
            let name = dotted_name(text, &toks, r + 2)?;
            let as_kw = find_kw(text, &toks, r + 2, "AS")?;
            let cols = text.get(toks.get(r + 2)?.0.start + name.len()..toks.get(as_kw)?.0.start)?.trim();
            let query = text.get(toks.get(as_kw + 1)?.0.start..)?.trim_end().trim_end_matches(';');
            let head = text.get(..toks.get(r)?.0.start)?.trim_end();
            let short = name.rsplit('.').next().unwrap_or(&name);
            return Some(format!(
                "{head} VIEW {name} AS WITH RECURSIVE {short} {cols} AS ({query}) SELECT * FROM {short}"
            ));
        }
    }
    if matches!(dialect, Dialect::MySql | Dialect::MariaDb) && word(0, "UPDATE") {
        // `UPDATE t, s SET ...`: the comma join written as the parser takes it.
        let set = find_kw(text, &toks, 1, "SET")?;
        let commas: Vec<(usize, usize)> = toks
            .iter()
            .take(set)
            .filter(|(t, d)| *d == 0 && t.is_punct(text, b','))
            .map(|(t, _)| (t.start, t.end))
            .collect();
        if commas.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len() + 16 * commas.len());
        let mut at = 0;
        for (a, b) in commas {
            out.push_str(text.get(at..a)?);
            out.push_str(" CROSS JOIN ");
            at = b;
        }
        out.push_str(text.get(at..)?);
        return Some(out);
    }
    if word(0, "INSERT") && word(1, "OVERWRITE") {
        return overwrite_directory(text, &toks);
    }
    if dialect == Dialect::Snowflake && word(0, "CREATE") {
        let ext = find_kw(text, &toks, 1, "EXTERNAL")?;
        if !word(ext + 1, "TABLE") {
            return None;
        }
        let mut at = ext + 2;
        if word(at, "IF") && word(at + 1, "NOT") && word(at + 2, "EXISTS") {
            at += 3;
        }
        let name = dotted_name(text, &toks, at)?;
        let loc = find_kw(text, &toks, at, "LOCATION")?;
        let eq = toks.get(loc + 1).filter(|(t, _)| t.is_punct(text, b'='))?;
        let value_start = toks.get(loc + 2)?.0.start;
        let value: String = text.get(value_start..)?.chars().take_while(|c| !c.is_whitespace()).collect();
        let _ = eq;
        let value = value.trim_matches('\'').replace('\'', "");
        return Some(format!("CREATE EXTERNAL TABLE {name} LOCATION '{value}'"));
    }
    None
}

/// Spark `CREATE TABLE t USING fmt PARTITIONED BY (...) OPTIONS (...) CLUSTER BY (...) ... AS
/// SELECT`: the layout clauses after `USING` (which the parser refuses there) dropped; they
/// change no lineage. `None` when there are none.
fn spark_table_clauses(text: &str, toks: &[(Token, i32)]) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let using = find_kw(text, toks, 1, "USING")?;
    let end = find_kw(text, toks, using, "AS").unwrap_or(toks.len());
    // The index of the `)` closing the `(` at index `open`.
    let close = |open: usize| {
        let depth = toks.get(open)?.1;
        toks.iter().enumerate().skip(open + 1).find(|(_, (t, d))| *d == depth && t.is_punct(text, b')')).map(|(i, _)| i)
    };
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut i = using + 1;
    while i < end {
        let by = ["PARTITIONED", "CLUSTERED", "SORTED", "CLUSTER"].iter().any(|k| word(i, k)) && word(i + 1, "BY");
        let open = if by {
            Some(i + 2)
        } else if word(i, "OPTIONS") || word(i, "TBLPROPERTIES") {
            Some(i + 1)
        } else {
            None
        };
        if let Some(o) = open.filter(|&o| toks.get(o).is_some_and(|(t, _)| t.is_punct(text, b'('))) {
            let c = close(o)?;
            cuts.push((toks.get(i)?.0.start, toks.get(c)?.0.end));
            i = c + 1;
        } else if word(i, "INTO") && word(i + 2, "BUCKETS") {
            cuts.push((toks.get(i)?.0.start, toks.get(i + 2)?.0.end));
            i += 3;
        } else {
            i += 1;
        }
    }
    if cuts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b) in cuts {
        out.push_str(text.get(at..a)?);
        at = b;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// `CREATE ... TABLE [IF NOT EXISTS] name`: the index of the `TABLE` keyword (among the first
/// eight tokens), the name as written, and the index of the first token after the name.
fn created_table(text: &str, toks: &[(Token, i32)]) -> Option<(usize, String, usize)> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let table = toks.iter().take(8).position(|(t, d)| *d == 0 && t.is_kw(text, "TABLE"))?;
    let mut at = table + 1;
    if word(at, "IF") && word(at + 1, "NOT") && word(at + 2, "EXISTS") {
        at += 3;
    }
    let name = dotted_name(text, toks, at)?;
    let end = toks.get(at)?.0.start + name.len();
    let after = toks.iter().position(|(t, _)| t.start >= end)?;
    Some((table, name, after))
}

/// `CREATE TABLE t (LIKE s [INCLUDING ...])` (Postgres), which the parser refuses with options:
/// `CREATE TABLE t LIKE s`. BigQuery `CREATE TABLE t COPY s` and `CREATE SNAPSHOT TABLE t CLONE s`:
/// `CREATE TABLE t CLONE s`. `None` for anything else.
fn create_like_or_copy(text: &str, toks: &[(Token, i32)]) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let (table, name, after) = created_table(text, toks)?;
    let snapshot = toks.iter().take(table).any(|(t, _)| t.is_kw(text, "SNAPSHOT"));
    let shallow = (word(after, "SHALLOW") || word(after, "DEEP")) && word(after + 1, "CLONE");
    // Snowflake's `COPY GRANTS` is no copy of data.
    if (word(after, "COPY") && !word(after + 1, "GRANTS")) || (snapshot && word(after, "CLONE")) || shallow {
        // The source's name only: its time-travel clause changes no lineage.
        let from = dotted_name(text, toks, if shallow { after + 2 } else { after + 1 })?;
        let head = if snapshot {
            format!("CREATE TABLE {name}")
        } else {
            text.get(..toks.get(after)?.0.start)?.trim_end().to_string()
        };
        return Some(format!("{head} CLONE {from}"));
    }
    let open = toks.get(after).filter(|(t, _)| t.is_punct(text, b'('))?;
    if !word(after + 1, "LIKE") {
        return None;
    }
    let from = dotted_name(text, toks, after + 2)?;
    // Only `(LIKE s <options>)`: other columns beside it would be lost.
    let depth = open.1 + 1;
    let extra = toks
        .iter()
        .skip(after + 1)
        .take_while(|(t, d)| !(*d == open.1 && t.is_punct(text, b')')))
        .any(|(t, d)| *d == depth && t.is_punct(text, b','));
    if extra {
        return None;
    }
    Some(format!("CREATE TABLE {name} LIKE {from}"))
}

/// Spark `INSERT OVERWRITE [LOCAL] DIRECTORY ['path'] USING fmt [OPTIONS (path 'p', ...)] query`
/// and Hive's `... ROW FORMAT ... STORED AS fmt query`: `INSERT OVERWRITE DIRECTORY 'path'
/// query` (the format changes no lineage). `None` for anything else.
fn overwrite_directory(text: &str, toks: &[(Token, i32)]) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let mut at = 2;
    let local = word(at, "LOCAL");
    if local {
        at += 1;
    }
    if !word(at, "DIRECTORY") {
        return None;
    }
    at += 1;
    let mut path = toks.get(at).filter(|(t, _)| t.kind == Kind::Str).map(|(t, _)| t.text(text).to_string());
    if path.is_some() {
        at += 1;
    }
    let query = toks
        .iter()
        .enumerate()
        .skip(at)
        .find(|(_, (t, d))| *d == 0 && (t.is_kw(text, "SELECT") || t.is_kw(text, "WITH") || t.is_kw(text, "FROM")))
        .map(|(i, _)| i)?;
    if query == at {
        return None;
    }
    if path.is_none() {
        // `OPTIONS (path 's3://...')`.
        let p = toks.iter().take(query).position(|(t, d)| *d == 1 && t.is_kw(text, "PATH"))?;
        path = toks.get(p + 1).filter(|(t, _)| t.kind == Kind::Str).map(|(t, _)| t.text(text).to_string());
    }
    let path = path?;
    let local = if local { "LOCAL " } else { "" };
    Some(format!("INSERT OVERWRITE {local}DIRECTORY {path} {}", text.get(toks.get(query)?.0.start..)?))
}

/// `CREATE TABLE t (a, b) AS query` (column names without types, Snowflake and Postgres):
/// `CREATE TABLE t AS SELECT * FROM (query) AS _q (a, b)`, the query's columns renamed by
/// position. `None` for anything else.
fn ctas_column_names(text: &str, toks: &[(Token, i32)]) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let (_, _, open) = created_table(text, toks)?;
    if !toks.get(open).is_some_and(|(t, _)| t.is_punct(text, b'(')) {
        return None;
    }
    // Names and commas only, up to the `)`.
    let mut i = open + 1;
    loop {
        let (t, _) = toks.get(i)?;
        if !matches!(t.kind, Kind::Word | Kind::Quoted) {
            return None;
        }
        let (n, _) = toks.get(i + 1)?;
        if n.is_punct(text, b')') {
            i += 2;
            break;
        }
        if !n.is_punct(text, b',') {
            return None;
        }
        i += 2;
    }
    if !word(i, "AS") || toks.get(i + 1).is_none() {
        return None;
    }
    let names = text.get(toks.get(open)?.0.start..toks.get(i - 1)?.0.end)?;
    let query = text.get(toks.get(i + 1)?.0.start..)?.trim_end().trim_end_matches(';');
    let head = text.get(..toks.get(open)?.0.start)?.trim_end();
    Some(format!("{head} AS SELECT * FROM ({query}) AS _q {names}"))
}

/// The table a trigger is defined on: `CREATE TRIGGER trg [BEFORE|AFTER ...] ON t ...`, as
/// written. `None` for anything else.
pub(crate) fn trigger_table(text: &str, dialect: Dialect) -> Option<String> {
    let toks = leveled(text, dialect);
    let trigger = toks.iter().take(6).position(|(t, _)| t.is_kw(text, "TRIGGER"))?;
    let on = toks
        .iter()
        .enumerate()
        .skip(trigger + 1)
        .take_while(|(_, (t, _))| !(t.is_kw(text, "AS") || t.is_kw(text, "BEGIN") || t.is_kw(text, "IS")))
        .find(|(_, (t, d))| *d == 0 && t.is_kw(text, "ON"))
        .map(|(i, _)| i)?;
    dotted_name(text, &toks, on + 1)
}
