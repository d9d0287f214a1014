//! Ingest: turning what producers send into validated, plain-Rust descriptions of lineage.
//!
//! Everything under this module is pure: no I/O, no store, no clock (the caller passes "now").
//! That keeps it exhaustively testable and safe to fuzz, and it is the only place that knows the
//! wire formats: serde types and JSON shapes stop here (STYLE item 4), the rest of the crate sees
//! the model types each submodule exports.
//!
//! - [`openlineage`]: OpenLineage request bodies (gzip, JSON limits) and events (envelope
//!   validation, the facets Tributary applies, column lineage in every published shape).
//!
//! # How it fits
//!
//! Pure code that knows the wire formats: no I/O, no store, no clock (the caller passes "now").
//! - `ingest::openlineage`: `decode_body` (size before and after gzip, a bounded inflater), `parse_body` /
//!   `parse_batch_body` (a byte pre-scan for nesting over 100, `\u0000` and unpaired surrogates, then serde_json),
//!   `validate` (one event into the `model::Event`, errors and warnings with JSON pointers, at most 100 each),
//!   `event_fingerprint` (independent of key order). `Limits::default()` holds seed 000's numbers: 50 MiB, 1,000
//!   events, nesting 100, 10,000 relationships, five minutes of future `eventTime`.
//! - `validate` (errors) depends on `facets` (warnings), never the reverse; both report through `issues`, which owns
//!   the bounded issue list and the property reads.
//! - `ingest::sql`: lexer, statement splitter (`split/`: `splitter` the statement-boundary state machine, `procedure`
//!   routines and triggers, `insert`, `rewrite` and `clean` the rewrites below), literal masking and the lineage
//!   analyzer over sqlparser, per dialect (`lineage/`: one `Analyzer` whose `statement()` dispatches each statement
//!   family to its file: `query`, `pivot`, `insert`, `update` (and DELETE), `merge`, `ddl`, `returning`; `expr`
//!   resolves column references through the scope chain, `names` qualifies and folds names, `session` remembers what
//!   the call created and wrote). Syntax the parser does not take (Hive multi-insert, T-SQL `INSERT ... EXEC`,
//!   `sp_rename`, `UPDATE TOP`, view options, MySQL/BigQuery `LOAD DATA`, Snowflake external tables, Redshift `APPEND
//!   FROM`, `CREATE TABLE (LIKE ...)`, BigQuery `COPY`/snapshots, Delta `SHALLOW|DEEP CLONE` and `REPLACE WHERE`,
//!   `INSERT OVERWRITE DIRECTORY ... USING`, Spark/MySQL `CREATE TABLE t SELECT`, `INSERT INTO t (WITH ...)`, T-SQL
//!   `SET c += x`, Hive `EXCHANGE PARTITION`, Azure Synapse `COPY INTO`, `IDENTIFIER('t')`) is rewritten on the lexer's
//!   tokens into equivalent statements before parsing (`split::multi_insert`, `split::insert_exec`, `split::rewrite`),
//!   and clauses that change no lineage but that the parser refuses (T-SQL `OPTION (...)`, join hints and `t (NOLOCK)`,
//!   time travel `FOR TIMESTAMP|VERSION AS OF`, materialized view options, Oracle CTAS attributes, Hive `WITH
//!   SERDEPROPERTIES`) are cut (`split::clean`); the stored, masked text is always the original. sqllineage's own test
//!   suite runs as data (`tests/fixtures/sqllineage/`, `src/ingest/sql/tests/sqllineage.rs`): each case passes or is
//!   listed with the convention it differs by and the exact answer it gives (a change to that answer fails). Dynamic
//!   SQL given as one literal (`EXECUTE IMMEDIATE '...'`, `EXEC sp_executesql N'...'`) is analysed as the statements in
//!   the literal. `tributary analyze-sql` (`main.rs`) calls `ingest::sql::analyze` directly, with no store, for the
//!   peer comparison (`scripts/sql-peers`, `tools/sql-peers/peers.py`).

pub mod openlineage;
pub mod sql;
