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
//!
//! The pieces, a file each:
//!
//! - this file: the two entry points ([`split_statements`], [`body_statements`]) and the token
//!   helpers the others share (keyword tests, [`leveled`] tokens with their depth, dotted names);
//! - [`splitter`]: the state machine that cuts a script into statements;
//! - [`procedure`]: a routine's name, body and language, and the table a trigger is on;
//! - [`insert`], [`rewrite`] and [`clean`]: statements the parser does not take in the dialect,
//!   rewritten into ones it does (the parent module tries them on each statement before parsing;
//!   each answers `None` for a statement it leaves alone).

mod clean;
mod insert;
mod procedure;
mod rewrite;
mod splitter;

use super::lexer::{Kind, Lexer, Token};
use super::Dialect;

pub(crate) use insert::{insert_exec, multi_insert};
pub use procedure::unwrap_procedure;
pub(crate) use procedure::{procedure_parts, trigger_table, unquote_string};
pub(crate) use rewrite::{identifier_variables, rewrite};
use splitter::{split, Mode};

/// Whether `text` may hold `WITH name (SELECT` (or `, name (SELECT|WITH|VALUES|FROM`): a look at
/// the bytes around each `(`, so that most statements are not lexed again for
/// [`cte_without_as`].
fn query_after_name(text: &str) -> bool {
    let b = text.as_bytes();
    let starts_query = |rest: &[u8]| {
        ["SELECT", "WITH", "VALUES", "FROM"].iter().any(|k| {
            rest.get(..k.len()).is_some_and(|w| w.eq_ignore_ascii_case(k.as_bytes()))
                && rest.get(k.len()).is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_')
        })
    };
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'"' | b'`' | b']');
    text.match_indices('(').any(|(i, _)| {
        let after = b.get(i + 1..).unwrap_or(&[]);
        let skip = after.iter().take_while(|c| c.is_ascii_whitespace()).count();
        if !starts_query(after.get(skip..).unwrap_or(&[])) {
            return false;
        }
        // A name right before the `(`, after `WITH`, `RECURSIVE` or a `,` (not `IN (SELECT`).
        let trim = |s: &'_ [u8]| s.len() - s.iter().rev().take_while(|c| c.is_ascii_whitespace()).count();
        let before = b.get(..i).unwrap_or(&[]);
        let name_end = trim(before);
        let name_start =
            name_end - before.get(..name_end).unwrap_or(&[]).iter().rev().take_while(|&&c| word(c)).count();
        if name_start == name_end {
            return false;
        }
        let head = before.get(..trim(before.get(..name_start).unwrap_or(&[]))).unwrap_or(&[]);
        let ends_with_kw = |kw: &[u8]| {
            head.len() >= kw.len()
                && head.get(head.len() - kw.len()..).is_some_and(|w| w.eq_ignore_ascii_case(kw))
                && (head.len() == kw.len() || head.get(head.len() - kw.len() - 1).is_some_and(|&c| !word(c)))
        };
        head.last() == Some(&b',') || ends_with_kw(b"WITH") || ends_with_kw(b"RECURSIVE")
    })
}

/// `WITH c (SELECT ...)`: a CTE whose query follows its name without `AS`, which the parser takes
/// for a column list and reads on as something else. Only Spark's grammar makes the `AS`
/// optional. The error to report; `None` when the statement has no such CTE.
pub(crate) fn cte_without_as(text: &str, dialect: Dialect) -> Option<String> {
    if dialect == Dialect::SparkSql || !query_after_name(text) {
        return None;
    }
    let toks = leveled(text, dialect);
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let punct = |i: usize, c: u8| toks.get(i).is_some_and(|(t, _)| t.is_punct(text, c));
    let with = toks.iter().position(|(t, d)| *d == 0 && t.is_kw(text, "WITH"))?;
    let mut i = if word(with + 1, "RECURSIVE") { with + 2 } else { with + 1 };
    loop {
        let (name, _) = toks.get(i).filter(|(t, _)| matches!(t.kind, Kind::Word | Kind::Quoted))?;
        i += 1;
        if punct(i, b'(') {
            if ["SELECT", "WITH", "VALUES", "FROM"].iter().any(|k| word(i + 1, k)) {
                return Some(format!("CTE {}: AS expected before its query", name.text(text)));
            }
            i = closing(text, &toks, i)? + 1;
        }
        if !word(i, "AS") {
            return None;
        }
        i += 1;
        while word(i, "NOT") || word(i, "MATERIALIZED") {
            i += 1;
        }
        if !punct(i, b'(') {
            return None;
        }
        i = closing(text, &toks, i)? + 1;
        if !punct(i, b',') {
            return None;
        }
        i += 1;
    }
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

/// The token index after an `IF NOT EXISTS` starting at token `at`; `at` when there is none.
fn if_not_exists(text: &str, toks: &[(Token, i32)], at: usize) -> usize {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    if word(at, "IF") && word(at + 1, "NOT") && word(at + 2, "EXISTS") {
        at + 3
    } else {
        at
    }
}

/// The dotted name starting at token `at`, as written, and the index of the first token after it.
fn name_at(text: &str, toks: &[(Token, i32)], at: usize) -> Option<(String, usize)> {
    let name = dotted_name(text, toks, at)?;
    let end = toks.get(at)?.0.start + name.len();
    let after = toks.iter().position(|(t, _)| t.start >= end)?;
    Some((name, after))
}

/// The index of the `)` closing the `(` at index `open`.
fn closing(text: &str, toks: &[(Token, i32)], open: usize) -> Option<usize> {
    let depth = toks.get(open)?.1;
    toks.iter().enumerate().skip(open + 1).find(|(_, (t, d))| *d == depth && t.is_punct(text, b')')).map(|(i, _)| i)
}

/// The token index of the first top-level keyword `kw` at or after `from`.
fn find_kw(text: &str, toks: &[(Token, i32)], from: usize, kw: &str) -> Option<usize> {
    toks.iter().enumerate().skip(from).find(|(_, (t, d))| *d == 0 && t.is_kw(text, kw)).map(|(i, _)| i)
}
