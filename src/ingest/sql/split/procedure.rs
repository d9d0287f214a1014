//! Stored routines taken apart: the name, body and language of a `CREATE PROCEDURE/FUNCTION/
//! TRIGGER` (dollar-quoted, string-quoted, `BEGIN ... END` or T-SQL's `AS ...` bodies), and the
//! table a trigger is on. The parent module splits the body into the statements that move data.

use crate::ingest::sql::lexer::{Kind, Lexer, Token};
use crate::ingest::sql::Dialect;

use super::{dotted_name, leveled, one_of, DML_START};

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
