//! A small byte lexer for SQL text: where strings, comments, quoted identifiers and dollar-quoted
//! bodies begin and end, and nothing more.
//!
//! Splitting a script into statements, masking literals, unwrapping procedure bodies and the
//! nesting cap all need to know which `;`, `(` or digit is code and which sits inside a string or a
//! comment. They do not need a parse tree, and they must work on text the parser rejects, so they
//! share this lexer instead of the parser's tokenizer. It allocates nothing (tokens are byte spans),
//! never fails (an unterminated string or comment runs to the end of the text) and only ever splits
//! the text at ASCII bytes, so every span is a valid `&str` slice.

use super::Dialect;

/// What a token is. Spans are byte offsets into the lexed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Spaces, tabs and newlines.
    Space,
    /// `-- ...`, `/* ... */`, `# ...` (MySQL, BigQuery) or `// ...` (Snowflake).
    Comment,
    /// A bare word: keyword, identifier, `@variable`, `#temp`, `$1`.
    Word,
    /// `"ident"`, `` `ident` `` or `[ident]` (T-SQL).
    Quoted,
    /// A string literal, prefixes (`N'..'`, `E'..'`, `r'..'`) included.
    Str,
    /// A dollar-quoted body `$tag$ ... $tag$`.
    Dollar,
    /// A numeric literal.
    Number,
    /// Any other single byte (`;`, `(`, `,`, operators, ...).
    Punct,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    pub fn text<'s>(&self, src: &'s str) -> &'s str {
        src.get(self.start..self.end).unwrap_or("")
    }

    /// Whether this is the bare word `kw` (ASCII case-insensitive).
    pub fn is_kw(&self, src: &str, kw: &str) -> bool {
        self.kind == Kind::Word && self.text(src).eq_ignore_ascii_case(kw)
    }

    pub fn is_punct(&self, src: &str, c: u8) -> bool {
        self.kind == Kind::Punct && src.as_bytes().get(self.start) == Some(&c)
    }

    /// Code, as opposed to spaces and comments.
    pub fn significant(&self) -> bool {
        !matches!(self.kind, Kind::Space | Kind::Comment)
    }
}

/// Per-dialect lexical switches.
#[derive(Debug, Clone, Copy)]
struct Rules {
    hash_comment: bool,
    slash_comment: bool,
    nested_comments: bool,
    backslash_escapes: bool,
    double_quote_string: bool,
    brackets: bool,
    dollar_quotes: bool,
    hash_in_words: bool,
    triple_quotes: bool,
    oracle_q_quotes: bool,
}

impl Rules {
    fn of(d: Dialect) -> Rules {
        use Dialect::*;
        Rules {
            hash_comment: matches!(d, MySql | MariaDb | BigQuery),
            slash_comment: matches!(d, Snowflake),
            nested_comments: matches!(d, Postgres),
            backslash_escapes: matches!(d, MySql | MariaDb | BigQuery | Hive | SparkSql | Snowflake),
            double_quote_string: matches!(d, MySql | MariaDb | BigQuery | Hive | SparkSql),
            brackets: matches!(d, TSql),
            dollar_quotes: matches!(d, Postgres | Redshift | Snowflake | Ansi | Trino),
            hash_in_words: matches!(d, TSql),
            triple_quotes: matches!(d, BigQuery),
            oracle_q_quotes: matches!(d, Oracle),
        }
    }
}

/// An iterator over the tokens of `src`.
pub(crate) struct Lexer<'s> {
    src: &'s str,
    bytes: &'s [u8],
    pub pos: usize,
    rules: Rules,
}

fn is_word_byte(b: u8, hash: bool) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'@' || b == b'$' || b >= 0x80 || (hash && b == b'#')
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str, dialect: Dialect) -> Lexer<'s> {
        Lexer { src, bytes: src.as_bytes(), pos: 0, rules: Rules::of(dialect) }
    }

    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    /// Ends a quoted run that started at `from` (just after the opening quote). Doubling the
    /// quote escapes it; a backslash escapes the next byte where `backslash` says so.
    fn quoted(&self, from: usize, close: u8, backslash: bool) -> usize {
        let mut i = from;
        while i < self.bytes.len() {
            let b = self.bytes[i];
            if backslash && b == b'\\' {
                i += 2;
                continue;
            }
            if b == close {
                if self.at(i + 1) == close {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i += 1;
        }
        self.bytes.len()
    }

    /// `$tag$` at `i`: the tag's length including both dollars, if it is one.
    fn dollar_tag(&self, i: usize) -> Option<usize> {
        let mut j = i + 1;
        if self.at(j).is_ascii_digit() {
            return None;
        }
        while j < self.bytes.len() && (self.bytes[j].is_ascii_alphanumeric() || self.bytes[j] == b'_') {
            j += 1;
        }
        (self.at(j) == b'$').then_some(j + 1 - i)
    }

    fn find_bytes(&self, from: usize, needle: &[u8]) -> Option<usize> {
        if needle.is_empty() {
            return Some(from);
        }
        self.bytes.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
    }

    fn block_comment(&self, start: usize) -> usize {
        let mut depth = 0usize;
        let mut i = start;
        while i + 1 < self.bytes.len() {
            if self.bytes[i] == b'/' && self.bytes[i + 1] == b'*' && (depth == 0 || self.rules.nested_comments) {
                depth += 1;
                i += 2;
            } else if self.bytes[i] == b'*' && self.bytes[i + 1] == b'/' {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            } else {
                i += 1;
            }
        }
        self.bytes.len()
    }

    fn line_end(&self, from: usize) -> usize {
        self.find_bytes(from, b"\n").unwrap_or(self.bytes.len())
    }

    fn number(&self, start: usize) -> usize {
        let b = self.bytes;
        let mut i = start;
        if b[i] == b'0' && matches!(self.at(i + 1), b'x' | b'X') && self.at(i + 2).is_ascii_hexdigit() {
            i += 2;
            while i < b.len() && b[i].is_ascii_hexdigit() {
                i += 1;
            }
            return i;
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if self.at(i) == b'.' && self.at(i + 1) != b'.' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if matches!(self.at(i), b'e' | b'E')
            && (self.at(i + 1).is_ascii_digit()
                || (matches!(self.at(i + 1), b'+' | b'-') && self.at(i + 2).is_ascii_digit()))
        {
            i += 2;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        // `1e` or `10d` (Hive/Spark suffixes): the letters belong to the literal.
        while i < b.len() && (b[i].is_ascii_alphabetic()) && i - start < 64 {
            i += 1;
        }
        i
    }

    /// The string literal starting at `i` (on its opening quote), with the given escapes.
    fn string_at(&self, i: usize, backslash: bool) -> usize {
        let q = self.bytes[i];
        if self.rules.triple_quotes && self.at(i + 1) == q && self.at(i + 2) == q {
            let close = [q, q, q];
            return self.find_bytes(i + 3, &close).map(|p| p + 3).unwrap_or(self.bytes.len());
        }
        self.quoted(i + 1, q, backslash)
    }

    fn next_token(&mut self) -> Option<Token> {
        let b = self.bytes;
        let start = self.pos;
        if start >= b.len() {
            return None;
        }
        let c = b[start];
        let r = self.rules;
        let (kind, end) = match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                let mut i = start;
                while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
                    i += 1;
                }
                (Kind::Space, i)
            }
            b'-' if self.at(start + 1) == b'-' => (Kind::Comment, self.line_end(start)),
            b'/' if self.at(start + 1) == b'*' => (Kind::Comment, self.block_comment(start)),
            b'/' if r.slash_comment && self.at(start + 1) == b'/' => (Kind::Comment, self.line_end(start)),
            b'#' if r.hash_comment => (Kind::Comment, self.line_end(start)),
            b'\'' => (Kind::Str, self.string_at(start, r.backslash_escapes)),
            b'"' if r.double_quote_string => (Kind::Str, self.string_at(start, r.backslash_escapes)),
            b'"' => (Kind::Quoted, self.quoted(start + 1, b'"', false)),
            b'`' => (Kind::Quoted, self.quoted(start + 1, b'`', false)),
            b'[' if r.brackets => (Kind::Quoted, self.quoted(start + 1, b']', false)),
            b'$' if r.dollar_quotes => match self.dollar_tag(start) {
                Some(len) => {
                    let tag = &b[start..start + len];
                    let end = self.find_bytes(start + len, tag).map(|p| p + len).unwrap_or(b.len());
                    (Kind::Dollar, end)
                }
                None => (Kind::Word, self.word_end(start)),
            },
            b'0'..=b'9' => (Kind::Number, self.number(start)),
            b'.' if self.at(start + 1).is_ascii_digit() && !self.prev_is_word() => {
                (Kind::Number, self.number_after_dot(start))
            }
            _ if is_word_byte(c, r.hash_in_words) || c == b'#' => {
                let end = self.word_end(start);
                let word = &b[start..end];
                // String prefixes: N'..', E'..', B'..', X'..', r'..', b'..', rb'..', U&'..', q'[..]'.
                let next = self.at(end);
                if next == b'\'' || (next == b'"' && r.double_quote_string) {
                    if r.oracle_q_quotes && (word.eq_ignore_ascii_case(b"q") || word.eq_ignore_ascii_case(b"nq")) {
                        (Kind::Str, self.oracle_q(end))
                    } else if word.len() <= 2 && word.iter().all(|x| b"nNeEbBxXrRuU".contains(x)) {
                        let raw = word.iter().any(|x| matches!(x, b'r' | b'R'));
                        let escapes = !raw && (r.backslash_escapes || word.eq_ignore_ascii_case(b"e"));
                        (Kind::Str, self.string_at(end, escapes))
                    } else {
                        (Kind::Word, end)
                    }
                } else {
                    (Kind::Word, end)
                }
            }
            _ => {
                // One byte, or a whole UTF-8 sequence for a non-ASCII byte (never reached: those
                // are word bytes), so the span stays on a char boundary.
                (Kind::Punct, start + 1)
            }
        };
        let end = end.max(start + 1).min(b.len());
        let end = self.boundary(end);
        self.pos = end;
        Some(Token { kind, start, end })
    }

    /// Moves `i` forward to a char boundary (an escape can jump into the middle of a UTF-8
    /// sequence).
    fn boundary(&self, mut i: usize) -> usize {
        while i < self.bytes.len() && !self.src.is_char_boundary(i) {
            i += 1;
        }
        i
    }

    fn prev_is_word(&self) -> bool {
        self.pos > 0 && {
            let p = self.bytes[self.pos - 1];
            p.is_ascii_alphanumeric() || p == b'_' || p == b'"' || p == b'`' || p == b']' || p == b')'
        }
    }

    fn number_after_dot(&self, start: usize) -> usize {
        let mut i = start + 1;
        while i < self.bytes.len() && self.bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    }

    fn word_end(&self, start: usize) -> usize {
        let mut i = start + 1;
        while i < self.bytes.len() && is_word_byte(self.bytes[i], self.rules.hash_in_words) {
            i += 1;
        }
        i
    }

    /// Oracle `q'<d> ... <d>'` starting at the quote.
    fn oracle_q(&self, quote: usize) -> usize {
        let open = self.at(quote + 1);
        let close = match open {
            b'[' => b']',
            b'{' => b'}',
            b'(' => b')',
            b'<' => b'>',
            0 => return self.bytes.len(),
            other => other,
        };
        let needle = [close, b'\''];
        self.find_bytes(quote + 2, &needle).map(|p| p + 2).unwrap_or(self.bytes.len())
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        self.next_token()
    }
}

/// What the caps look at before parsing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Shape {
    /// The deepest parenthesis nesting.
    pub depth: usize,
    /// The most operators (`+`, `=`, `AND`, `||`, ...) in one run at one nesting level without a
    /// `,` between them: a bound on how deep the parser's expression tree for that run gets.
    pub chain: usize,
}

const WORD_OPERATORS: &[&str] = &["AND", "OR", "LIKE", "ILIKE", "IS", "IN", "BETWEEN", "NOT", "DIV", "MOD", "XOR"];

/// The [`Shape`] of `src`, outside strings and comments. Stops early once past `depth_limit` or
/// `chain_limit` (the caller only needs to know that a cap was exceeded).
pub(crate) fn shape(src: &str, dialect: Dialect, depth_limit: usize, chain_limit: usize) -> Shape {
    let bytes = src.as_bytes();
    let mut runs: Vec<usize> = vec![0];
    let mut out = Shape::default();
    for t in Lexer::new(src, dialect) {
        let op = match t.kind {
            Kind::Punct => match bytes[t.start] {
                b'(' => {
                    runs.push(0);
                    out.depth = out.depth.max(runs.len() - 1);
                    if out.depth > depth_limit {
                        return out;
                    }
                    false
                }
                b')' => {
                    if runs.len() > 1 {
                        runs.pop();
                    }
                    false
                }
                b',' | b';' => {
                    if let Some(r) = runs.last_mut() {
                        *r = 0;
                    }
                    false
                }
                b'+' | b'-' | b'*' | b'/' | b'%' | b'|' | b'&' | b'^' | b'=' | b'<' | b'>' | b'!' | b'~' => true,
                _ => false,
            },
            Kind::Word => WORD_OPERATORS.iter().any(|w| t.text(src).eq_ignore_ascii_case(w)),
            _ => false,
        };
        if op {
            if let Some(r) = runs.last_mut() {
                *r += 1;
                out.chain = out.chain.max(*r);
                if out.chain > chain_limit {
                    return out;
                }
            }
        }
    }
    out
}
