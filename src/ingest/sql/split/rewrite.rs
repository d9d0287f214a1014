//! Dialect syntax the parser does not take, rewritten into an equivalent statement it does (for
//! lineage only: the rewrite keeps what is read and written, not every option). [`rewrite`] first
//! has [`clean`](super::clean) cut the clauses that change no lineage, then rewrites the statement
//! as a whole when its form asks for it.

use crate::ingest::sql::lexer::{Kind, Token};
use crate::ingest::sql::Dialect;

use super::clean::clean;
use super::{closing, dotted_name, find_kw, if_not_exists, leveled, name_at};

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
/// - Spark/Hive `INSERT OVERWRITE DIRECTORY` with a format: see [`overwrite_directory`];
/// - Spark/MySQL `CREATE TABLE t SELECT ...`: `CREATE TABLE t AS SELECT ...`;
/// - `INSERT INTO t (WITH ... SELECT ...)`: the query without its parentheses;
/// - T-SQL `UPDATE ... SET c += x`: see [`compound_assignments`];
/// - Hive `ALTER TABLE a EXCHANGE PARTITION (p) WITH TABLE b`: `INSERT INTO a SELECT * FROM b`;
/// - Azure Synapse `COPY INTO t FROM 'https://...'`: `LOAD DATA INPATH '...' INTO TABLE t`;
/// - Snowflake's and Databricks' `IDENTIFIER('db.s.t')`: `db.s.t` (see [`identifier_literals`]).
pub(crate) fn rewrite(text: &str, dialect: Dialect) -> Option<String> {
    if let Some(named) = identifier_literals(text, dialect) {
        return Some(rewrite(&named, dialect).unwrap_or(named));
    }
    let toks = leveled(text, dialect);
    match clean(text, &toks, dialect) {
        Some(cleaned) => {
            let toks = leveled(&cleaned, dialect);
            Some(rewrite_one(&cleaned, toks, dialect).unwrap_or(cleaned))
        }
        None => rewrite_one(text, toks, dialect),
    }
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
    if matches!(dialect, Dialect::SparkSql | Dialect::Hive | Dialect::MySql | Dialect::MariaDb) && word(0, "CREATE") {
        // `CREATE TABLE t SELECT ...` (Spark's and MySQL's `AS` is optional): with the `AS`.
        if let Some((_, _, after)) = created_table(text, &toks) {
            if word(after, "SELECT") || word(after, "WITH") {
                let at = toks.get(after)?.0.start;
                return Some(format!("{} AS {}", text.get(..at)?.trim_end(), text.get(at..)?));
            }
        }
    }
    if word(0, "INSERT") {
        if let Some(r) = insert_parenthesized_query(text, &toks) {
            return Some(r);
        }
    }
    if dialect == Dialect::TSql && word(0, "UPDATE") {
        return compound_assignments(text, &toks);
    }
    if word(0, "ALTER") && word(1, "TABLE") {
        // Hive `ALTER TABLE a EXCHANGE PARTITION (p) WITH TABLE b`: b's partition moves into a.
        if let Some((name, at)) = name_at(text, &toks, 2) {
            if word(at, "EXCHANGE")
                && word(at + 1, "PARTITION")
                && toks.get(at + 2).is_some_and(|(t, _)| t.is_punct(text, b'('))
            {
                let c = closing(text, &toks, at + 2)?;
                if word(c + 1, "WITH") && word(c + 2, "TABLE") {
                    let from = dotted_name(text, &toks, c + 3)?;
                    return Some(format!("INSERT INTO {name} SELECT * FROM {from}"));
                }
            }
        }
    }
    if matches!(dialect, Dialect::TSql) && word(0, "COPY") && word(1, "INTO") {
        // Azure Synapse `COPY INTO t [(cols)] FROM 'https://...' [, '...'] WITH (...)`: a load.
        let name = dotted_name(text, &toks, 2)?;
        let from = find_kw(text, &toks, 2, "FROM")?;
        let file = toks.get(from + 1).filter(|(t, _)| t.kind == Kind::Str)?.0.text(text);
        return Some(format!("LOAD DATA INPATH {file} INTO TABLE {name}"));
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
            let at = if_not_exists(text, &toks, k + 1);
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
        let (name, at) = name_at(text, &toks, 2)?;
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
        let at = if_not_exists(text, &toks, ext + 2);
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
            let c = closing(text, toks, o)?;
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
    let table = toks.iter().take(8).position(|(t, d)| *d == 0 && t.is_kw(text, "TABLE"))?;
    let (name, after) = name_at(text, toks, if_not_exists(text, toks, table + 1))?;
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

/// T-SQL compound assignments in `UPDATE ... SET c += x` (`+=`, `-=`, `*=`, `/=`, `%=`, `&=`, `|=`,
/// `^=`): `SET c = c + x`. `None` when there are none.
fn compound_assignments(text: &str, toks: &[(Token, i32)]) -> Option<String> {
    let set = find_kw(text, toks, 1, "SET")?;
    let mut out = String::with_capacity(text.len() + 32);
    let mut at = 0;
    // The column being assigned starts after `SET` or a top-level `,`.
    let mut target_start = set + 1;
    let mut changed = false;
    let mut i = set + 1;
    while let Some((t, d)) = toks.get(i) {
        if *d == 0 && (t.is_kw(text, "FROM") || t.is_kw(text, "WHERE") || t.is_kw(text, "OUTPUT")) {
            break;
        }
        if *d == 0 && t.is_punct(text, b',') {
            target_start = i + 1;
        }
        let op = t.kind == Kind::Punct && t.end - t.start == 1 && b"+-*/%&|^".contains(&text.as_bytes()[t.start]);
        let eq = toks.get(i + 1).filter(|(n, _)| n.is_punct(text, b'=') && n.start == t.end);
        if *d == 0 && op && eq.is_some() && i > target_start {
            let column = text.get(toks.get(target_start)?.0.start..toks.get(i - 1)?.0.end)?;
            let eq = eq?.0;
            out.push_str(text.get(at..t.start)?);
            out.push_str("= ");
            out.push_str(column);
            out.push(' ');
            out.push_str(t.text(text));
            out.push_str(" (");
            // The value runs to the next top-level `,` or clause.
            let mut j = i + 2;
            while let Some((x, xd)) = toks.get(j) {
                if *xd == 0
                    && (x.is_punct(text, b',')
                        || x.is_punct(text, b';')
                        || x.is_kw(text, "FROM")
                        || x.is_kw(text, "WHERE")
                        || x.is_kw(text, "OUTPUT"))
                {
                    break;
                }
                j += 1;
            }
            let value_end = toks.get(j.saturating_sub(1))?.0.end;
            out.push_str(text.get(eq.end..value_end)?.trim());
            out.push(')');
            at = value_end;
            changed = true;
            i = j;
            continue;
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// `INSERT INTO t (WITH c AS (...) SELECT ...)`: the query without its parentheses. `None` for
/// anything else.
fn insert_parenthesized_query(text: &str, toks: &[(Token, i32)]) -> Option<String> {
    let word = |i: usize, kw: &str| toks.get(i).is_some_and(|(t, _)| t.is_kw(text, kw));
    let into = if word(1, "INTO") || word(1, "OVERWRITE") { 2 } else { 1 };
    let into = if word(into, "TABLE") { into + 1 } else { into };
    let (_, after) = name_at(text, toks, into)?;
    if !(toks.get(after).is_some_and(|(t, _)| t.is_punct(text, b'(')) && word(after + 1, "WITH")) {
        return None;
    }
    let c = closing(text, toks, after)?;
    if !toks.get(c + 1).is_none_or(|(t, _)| t.is_punct(text, b';')) {
        return None;
    }
    let (open, close) = (toks.get(after)?.0, toks.get(c)?.0);
    Some(format!(
        "{} {}{}",
        text.get(..open.start)?.trim_end(),
        text.get(open.end..close.start)?.trim(),
        text.get(close.end..)?
    ))
}

/// Whether `text` may hold an `IDENTIFIER(` (a search for each `(`, before any lexing: most
/// statements are not lexed again for it).
fn mentions_identifier(text: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices('(').any(|(i, _)| {
        let before = b.get(..i).unwrap_or(&[]);
        let end = before.len() - before.iter().rev().take_while(|c| c.is_ascii_whitespace()).count();
        end >= 10 && before.get(end - 10..end).is_some_and(|w| w.eq_ignore_ascii_case(b"identifier"))
    })
}

/// `IDENTIFIER('db.s.t')` (Snowflake, Databricks), a table named by a string: the name itself,
/// `db.s.t`. `None` when there is none.
pub(crate) fn identifier_literals(text: &str, dialect: Dialect) -> Option<String> {
    if !mentions_identifier(text) {
        return None;
    }
    let toks = leveled(text, dialect);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (i, (t, _)) in toks.iter().enumerate() {
        if !t.is_kw(text, "IDENTIFIER") || !toks.get(i + 1).is_some_and(|(p, _)| p.is_punct(text, b'(')) {
            continue;
        }
        let Some((lit, _)) = toks.get(i + 2).filter(|(l, _)| l.kind == Kind::Str) else { continue };
        let Some((close, _)) = toks.get(i + 3).filter(|(c, _)| c.is_punct(text, b')')) else { continue };
        let name = lit.text(text);
        let name = name.get(1..name.len().saturating_sub(1)).unwrap_or("");
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || "_.$\"`".contains(c)) {
            continue;
        }
        out.push_str(text.get(at..t.start)?);
        out.push_str(name);
        at = close.end;
    }
    if at == 0 {
        return None;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// The arguments of `IDENTIFIER(...)` that are no string (`$t`, `:t`, `?`, an expression): tables
/// named by a value known only when the statement runs.
pub(crate) fn identifier_variables(text: &str, dialect: Dialect) -> Vec<String> {
    if !mentions_identifier(text) {
        return Vec::new();
    }
    let toks = leveled(text, dialect);
    let mut out = Vec::new();
    for (i, (t, _)) in toks.iter().enumerate() {
        if t.is_kw(text, "IDENTIFIER") && toks.get(i + 1).is_some_and(|(p, _)| p.is_punct(text, b'(')) {
            if let Some(c) = closing(text, &toks, i + 1) {
                if let (Some((a, _)), Some((b, _))) = (toks.get(i + 2), toks.get(c.saturating_sub(1))) {
                    if c > i + 2 {
                        out.extend(text.get(a.start..b.end).map(str::to_string));
                    }
                }
            }
        }
    }
    out
}
