//! INSERT forms the parser does not take, rewritten into ones it does: a Hive/Spark multi-insert
//! becomes one `INSERT ... SELECT` per insert, and T-SQL `INSERT ... EXEC proc` an insert of
//! `DEFAULT VALUES` plus the procedure's name.

use crate::ingest::sql::Dialect;

use super::leveled;

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
