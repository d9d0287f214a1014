//! Query logs and definition files as `import-query-log` reads them: CSV rows in, one
//! [`LoggedQuery`] per statement out. Pure: the caller opens the file (any `io::Read` will do, so
//! a test or a fuzz target passes bytes), and recording is `service::sql::query_log`'s.
//!
//! **Columns.** Headers match case-insensitively, ignoring surrounding spaces and a UTF-8 byte
//! order mark, with a space or `-` read as `_` (`Query ID` is `query_id`). The first name of each
//! list found in the header wins:
//! - the statement ([`LogKind`] decides): `query_text`; `view_definition`; `procedure_definition`;
//! - the defaults for unqualified names: `database_name`, `table_catalog`, `procedure_catalog`
//!   and `schema_name`, `table_schema`, `procedure_schema`;
//! - the order statements apply in: `start_time`, compared as written;
//! - who ran it, which names the job ([`USER_COLUMNS`]), and the run's id ([`QUERY_ID_COLUMNS`]);
//!   the names of Snowflake's `QUERY_HISTORY` (`user_name`, `query_id`), BigQuery's
//!   `INFORMATION_SCHEMA.JOBS` (`user_email`, `job_id`), Redshift's `SYS_QUERY_HISTORY`
//!   (`user_id`, `query_id`), Postgres's `pg_stat_statements` (`userid`, `queryid`) and
//!   Databricks' `system.query.history` (`statement_id`). A bare `query` is not taken as an id:
//!   it is Redshift `STL_QUERY`'s id but `pg_stat_statements`' and BigQuery's statement text;
//! - the run's start and end ([`parse_log_time`]): `start_time`, `end_time`.
//!
//! A row whose statement is empty is skipped; every other value is trimmed, and empty is absent.

use chrono::{DateTime, Datelike, NaiveDateTime, Utc};

/// What the rows of a file hold (also `import-query-log --kind`'s values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogKind {
    /// A query log: statements as they ran, applied in `start_time` order.
    Queries,
    /// View definitions (`CREATE VIEW`, or the query alone with the view's name beside it).
    Views,
    /// Procedure definitions (`CREATE PROCEDURE`, or a body with the procedure's name beside it).
    Procedures,
}

/// The columns that name who ran a statement (the job), first found first.
pub const USER_COLUMNS: &[&str] = &["user_name", "user", "username", "user_email", "user_id", "userid"];
/// The columns that name one execution of a statement (the run), first found first.
pub const QUERY_ID_COLUMNS: &[&str] = &["query_id", "queryid", "job_id", "statement_id"];

/// One row of a query log, or one view or procedure definition.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedQuery {
    pub sql: String,
    pub database: Option<String>,
    pub schema: Option<String>,
    /// `start_time` as written (empty when absent): the order the statements of a query log
    /// apply in.
    pub start: String,
    /// The procedure a body given alone belongs to.
    pub procedure: Option<String>,
    /// Who ran it: the name of its job. No user, no job.
    pub user: Option<String>,
    /// The log's id of this execution: its run.
    pub query_id: Option<String>,
    /// `start_time` and `end_time`, when they read as times.
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
}

/// The rows of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryLog {
    pub kind: LogKind,
    pub rows: Vec<LoggedQuery>,
}

/// Why a file could not be read. Messages name no file: the caller knows which it opened.
#[derive(Debug, thiserror::Error)]
pub enum QueryLogError {
    /// The header row could not be read (not UTF-8, or an I/O error).
    #[error(transparent)]
    Header(csv::Error),
    /// None of the columns that can hold the statement.
    #[error("no {} column", .0.join(" or "))]
    NoStatementColumn(Vec<&'static str>),
    /// A row is not valid CSV (a different number of fields, not UTF-8); `row` counts the header
    /// as 1, as a spreadsheet numbers lines.
    #[error("row {row} is not valid CSV")]
    Row {
        row: usize,
        #[source]
        source: csv::Error,
    },
}

/// A header as it is matched: trimmed, lower-case, `_` for spaces and `-`, no byte order mark.
fn header_key(h: &str) -> String {
    h.trim_start_matches('\u{feff}')
        .trim()
        .chars()
        .map(|c| if c == ' ' || c == '-' { '_' } else { c.to_ascii_lowercase() })
        .collect()
}

/// Reads the rows of a query log or a definitions file (see the module's notes).
pub fn read_query_log(input: impl std::io::Read, kind: LogKind) -> Result<QueryLog, QueryLogError> {
    let mut reader = csv::Reader::from_reader(input);
    let headers: Vec<String> = reader.headers().map_err(QueryLogError::Header)?.iter().map(header_key).collect();
    let col = |names: &[&str]| names.iter().find_map(|name| headers.iter().position(|h| h == name));
    let text_names: &[&'static str] = match kind {
        LogKind::Queries => &["query_text"],
        LogKind::Views => &["view_definition", "query_text"],
        LogKind::Procedures => &["procedure_definition", "query_text"],
    };
    let text = col(text_names).ok_or_else(|| QueryLogError::NoStatementColumn(text_names.to_vec()))?;
    let db = col(&["database_name", "table_catalog", "procedure_catalog"]);
    let schema = col(&["schema_name", "table_schema", "procedure_schema"]);
    let start = col(&["start_time"]);
    let end = col(&["end_time"]);
    let user = col(USER_COLUMNS);
    let query_id = col(QUERY_ID_COLUMNS);
    let name = match kind {
        LogKind::Queries => None,
        LogKind::Views => col(&["table_name", "view_name", "object_name"]),
        LogKind::Procedures => col(&["procedure_name", "object_name"]),
    };
    let mut rows = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|source| QueryLogError::Row { row: i + 2, source })?;
        let get =
            |c: Option<usize>| c.and_then(|c| rec.get(c)).map(str::trim).filter(|v| !v.is_empty()).map(String::from);
        let Some(mut sql) = get(Some(text)) else { continue };
        let name = get(name);
        let first_word = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        let defines = matches!(first_word.as_str(), "CREATE" | "ALTER" | "REPLACE");
        let mut procedure = None;
        match (kind, name) {
            // A catalog's view text is often the query alone (Postgres `pg_views.definition`).
            (LogKind::Views, Some(view)) if !defines => sql = format!("CREATE VIEW {view} AS {sql}"),
            (LogKind::Procedures, Some(p)) if !defines => procedure = Some(p),
            _ => {}
        }
        let start = get(start).unwrap_or_default();
        let ended_at = get(end).as_deref().and_then(parse_log_time);
        rows.push(LoggedQuery {
            sql,
            database: get(db),
            schema: get(schema),
            started_at: parse_log_time(&start),
            start,
            procedure,
            user: get(user),
            query_id: get(query_id),
            ended_at,
        });
    }
    Ok(QueryLog { kind, rows })
}

/// A log's time: RFC 3339 (`2026-01-02T03:04:05.678Z`), or `YYYY-MM-DD HH:MM:SS[.fff]` with `T` or
/// a space between date and time, followed by an offset (`+01:00`, `-0800`, with or without a
/// space before it), ` UTC` or nothing (read as UTC), as Snowflake, BigQuery, Redshift and
/// Postgres write them. Anything else is no time, and so is a time outside the years 1 to 9999
/// in UTC (RFC 3339 could not write it back).
pub fn parse_log_time(text: &str) -> Option<DateTime<Utc>> {
    parse_any_time(text.trim()).filter(|t| (1..=9999).contains(&t.year()))
}

fn parse_any_time(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.to_utc());
    }
    // One shape to parse: a space between date and time, none before the offset.
    let mut s = text.to_string();
    if s.get(10..11) == Some("T") {
        s.replace_range(10..11, " ");
    }
    if let Some(naive) = s.strip_suffix("UTC").or_else(|| s.strip_suffix('Z')) {
        s = naive.trim_end().to_string();
    } else if let Some(at) = s.rfind(' ').filter(|at| *at > 10 && s[at + 1..].starts_with(['+', '-'])) {
        // `... 03:04:05.678 +0100`: the offset's space goes.
        s.remove(at);
    }
    for format in ["%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%#z"] {
        if let Ok(t) = DateTime::parse_from_str(&s, format) {
            return Some(t.to_utc());
        }
    }
    NaiveDateTime::parse_from_str(&s, "%Y-%m-%d %H:%M:%S%.f").ok().map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, kind: LogKind) -> Result<QueryLog, QueryLogError> {
        read_query_log(text.as_bytes(), kind)
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).unwrap_or_default()
    }

    #[test]
    fn a_query_log_row_gives_its_statement_defaults_user_run_and_times() {
        let log = read(
            "QUERY_ID,Query Text,DATABASE_NAME,SCHEMA_NAME,USER_NAME,START_TIME,END_TIME\n\
             01b2-c3,\"INSERT INTO a SELECT * FROM b\",DB,PUBLIC,ALICE,2026-01-01 10:00:00.250 -0800,2026-01-01 10:00:02.250 -0800\n\
             ,  ,DB,PUBLIC,BOB,,\n\
             q2,SELECT 1,,, ,not a time,\n",
            LogKind::Queries,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(log.rows.len(), 2, "the row without a statement is skipped");
        let first = &log.rows[0];
        assert_eq!(first.sql, "INSERT INTO a SELECT * FROM b");
        assert_eq!((first.database.as_deref(), first.schema.as_deref()), (Some("DB"), Some("PUBLIC")));
        assert_eq!((first.user.as_deref(), first.query_id.as_deref()), (Some("ALICE"), Some("01b2-c3")));
        assert_eq!(first.start, "2026-01-01 10:00:00.250 -0800");
        assert_eq!(first.started_at, Some(t("2026-01-01T18:00:00.250Z")));
        assert_eq!(first.ended_at, Some(t("2026-01-01T18:00:02.250Z")));
        let second = &log.rows[1];
        assert_eq!((second.user.as_deref(), second.query_id.as_deref()), (None, Some("q2")), "a blank user is none");
        assert_eq!((second.start.as_str(), second.started_at, second.ended_at), ("not a time", None, None));
    }

    #[test]
    fn user_and_query_id_columns_of_other_systems_are_read() {
        for (header, user, id) in [
            ("query_text,user_email,job_id", "a@x.com", "bquxjob_1"),
            ("query_text,user_id,query_id", "100", "42"),
            ("query_text,userid,queryid", "16384", "-7"),
            ("query_text,username,statement_id", "ann", "s-1"),
            ("query_text,user,query", "ann", ""),
        ] {
            let log = read(&format!("{header}\nSELECT 1,{user},{id}\n"), LogKind::Queries).unwrap();
            let row = &log.rows[0];
            assert_eq!(row.user.as_deref(), Some(user), "{header}");
            assert_eq!(row.query_id.as_deref(), Some(id).filter(|i| !i.is_empty()), "{header}");
        }
        // `user_name` wins over `user_id` whatever their order.
        let log = read("query_text,user_id,user_name\nSELECT 1,7,ann\n", LogKind::Queries).unwrap();
        assert_eq!(log.rows[0].user.as_deref(), Some("ann"));
        // No user column: no user, as before jobs were read.
        let log = read("query_text,query_id\nSELECT 1,q\n", LogKind::Queries).unwrap();
        assert_eq!(log.rows[0].user, None);
    }

    #[test]
    fn definitions_take_their_names() {
        let views =
            read("table_schema,table_name,view_definition\npublic,v,SELECT a FROM s\n", LogKind::Views).unwrap();
        assert_eq!(views.rows[0].sql, "CREATE VIEW v AS SELECT a FROM s");
        assert_eq!(views.rows[0].schema.as_deref(), Some("public"));
        let procs =
            read("procedure_name,procedure_definition\np,INSERT INTO t SELECT 1\n", LogKind::Procedures).unwrap();
        assert_eq!(procs.rows[0].procedure.as_deref(), Some("p"));
        let whole =
            read("procedure_name,procedure_definition\np,CREATE PROCEDURE p() AS SELECT 1\n", LogKind::Procedures)
                .unwrap();
        assert_eq!(whole.rows[0].procedure, None, "a whole definition names its procedure itself");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = read("sql\nSELECT 1\n", LogKind::Views).unwrap_err();
        assert_eq!(e.to_string(), "no view_definition or query_text column");
        let e = read("query_text,user_name\nSELECT 1,a\nSELECT 2\n", LogKind::Queries).unwrap_err();
        assert!(matches!(e, QueryLogError::Row { row: 3, .. }), "{e:?}");
        assert_eq!(e.to_string(), "row 3 is not valid CSV");
        let e = read_query_log(&b"query_text\n\xff\xfe\n"[..], LogKind::Queries).unwrap_err();
        assert!(matches!(e, QueryLogError::Row { row: 2, .. }), "{e:?}");
        assert!(read("", LogKind::Queries).is_err());
        // A byte order mark before the first header is no part of its name.
        let log = read("\u{feff}query_text\nSELECT 1\n", LogKind::Queries).unwrap();
        assert_eq!(log.rows.len(), 1);
    }

    #[test]
    fn log_times_read_as_the_warehouses_write_them() {
        let at = t("2026-01-02T03:04:05Z");
        let ms = t("2026-01-02T03:04:05.678Z");
        for (text, want) in [
            ("2026-01-02T03:04:05Z", at),
            ("2026-01-02T03:04:05.678+00:00", ms),
            ("2026-01-02 03:04:05", at),
            ("2026-01-02T03:04:05", at),
            ("2026-01-02 03:04:05.678", ms),
            ("2026-01-02 03:04:05.678 UTC", ms),
            ("2026-01-02 03:04:05.678000 UTC", ms),
            ("2026-01-02 04:04:05.678 +0100", ms),
            ("2026-01-01 19:04:05.678 -0800", ms),
            ("2026-01-02 04:04:05.678+01:00", ms),
            ("2026-01-02 04:04:05+01", at),
            ("  2026-01-02 03:04:05Z ", at),
        ] {
            assert_eq!(parse_log_time(text), Some(want), "{text}");
        }
        for text in [
            "",
            "yesterday",
            "2026-01-02",
            "03:04:05",
            "2026-13-02 03:04:05",
            "2026-01-02 03:04:05 +9999",
            "+12026-01-02 03:04:05",
            "9999-12-31 23:59:59 -0100",
        ] {
            assert_eq!(parse_log_time(text), None, "{text}");
        }
    }
}
