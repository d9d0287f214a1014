//! Clauses that change no lineage and that the parser refuses in the dialect (T-SQL hints, time
//! travel, view and table options), cut out of a statement before it is parsed.

use crate::ingest::sql::lexer::{Kind, Token};
use crate::ingest::sql::Dialect;

use super::{closing, find_kw, if_not_exists, name_at};

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

/// The options of a created table or view, between its name (at token `at`, with the column list
/// after it) and its `AS`: the index of the first token after the name and columns, and the index
/// of `AS` (equal when there are none).
fn options_before_as(text: &str, toks: &[(Token, i32)], at: usize) -> Option<(usize, usize)> {
    let (_, after) = name_at(text, toks, at)?;
    let after = match toks.get(after) {
        Some((t, _)) if t.is_punct(text, b'(') => closing(text, toks, after)? + 1,
        _ => after,
    };
    let as_kw = find_kw(text, toks, after, "AS")?;
    Some((after, as_kw))
}

/// Clauses that change no lineage and that the parser refuses in the dialect, cut out; `None`
/// when there are none:
///
/// - T-SQL query hints `OPTION (...)`, join hints (`INNER LOOP JOIN`, `LEFT HASH JOIN`) and the
///   old form of table hints, `t (NOLOCK)`;
/// - Hive and Spark `WITH SERDEPROPERTIES (...)` of a created table;
/// - time travel other than BigQuery's and T-SQL's (which parse): Trino/Iceberg `FOR TIMESTAMP|
///   VERSION AS OF x`, Delta `VERSION|TIMESTAMP AS OF x`, `FOR SYSTEM_TIME AS OF x`;
/// - materialized view options between the name and `AS` (Redshift `AUTO REFRESH YES`,
///   `BACKUP NO`, `DISTKEY(...)`) and Postgres's trailing `WITH [NO] DATA`;
/// - Oracle physical attributes of a CTAS (`NOLOGGING PARALLEL 4 COMPRESS ...`);
/// - Delta `INSERT INTO t REPLACE WHERE cond SELECT ...`: the condition (which rows are replaced).
pub(super) fn clean(text: &str, toks: &[(Token, i32)], dialect: Dialect) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let punct = |i: usize, c: u8| toks.get(i).is_some_and(|(t, _)| t.is_punct(text, c));
    let close = |open: usize| closing(text, toks, open);
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
        let (after, as_kw) = options_before_as(text, toks, if_not_exists(text, toks, view + 1))?;
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
            let (after, as_kw) = options_before_as(text, toks, table + 1)?;
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
    if matches!(dialect, Dialect::Hive | Dialect::SparkSql) && word(0, "CREATE") {
        // `ROW FORMAT SERDE '...' WITH SERDEPROPERTIES ("k" = "v", ...)`: how rows are read,
        // with values (regular expressions) whose backslash escapes the parser does not take.
        if let Some(w) = toks.iter().position(|(t, d)| *d == 0 && t.is_kw(text, "SERDEPROPERTIES")) {
            if w > 0 && word(w - 1, "WITH") && punct(w + 1, b'(') {
                cuts.push(span(w - 1, close(w + 1)?)?);
            }
        }
    }
    let time_travel = !matches!(dialect, Dialect::BigQuery | Dialect::TSql);
    let mut i = 0;
    while i < toks.len() {
        let (t, d) = toks.get(i)?;
        let d = *d;
        // T-SQL's old table hint syntax, `FROM db.dbo.t (NOLOCK)`, which the parser reads as a
        // call of a table function `t`: the hints (words only) are cut.
        if dialect == Dialect::TSql
            && t.is_punct(text, b'(')
            && i > 0
            && toks.get(i - 1).is_some_and(|(p, _)| matches!(p.kind, Kind::Word | Kind::Quoted))
            && TSQL_TABLE_HINTS.iter().any(|h| word(i + 1, h) && !word(i + 1, "INDEX"))
        {
            let c = close(i)?;
            let only_hints =
                (i + 1..c).all(|k| punct(k, b',') || TSQL_TABLE_HINTS.iter().any(|h| word(k, h) && !word(k, "INDEX")));
            if only_hints {
                cuts.push(span(i, c)?);
                i = c + 1;
                continue;
            }
        }
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
