//! SQL lineage, the pure half: statement text in, what each statement reads and writes out, down
//! to columns. This is the contract's `analyzeSql` (CONTRACT.md, Queries); `ingestSql` records what
//! it returns. No I/O, no store, no clock, and no panics on any input.
//!
//! The steps, each in its own module:
//!
//! 1. [`split_statements`] ([`split`]): a script into statements, on the tokens of a small lexer
//!    ([`lexer`]) that knows strings, comments, quoted identifiers and dollar-quoted bodies per
//!    dialect. Stored procedures are taken apart by [`unwrap_procedure`] and their data-moving
//!    statements analysed one by one, each reported with its [`StatementLineage::procedure`].
//! 2. Caps before parsing: a statement over [`Options::max_statement_bytes`], nested deeper than
//!    [`Options::max_nesting`] parentheses, or with a run of more than [`MAX_OPERATOR_RUN`]
//!    operators in one expression is reported as an error and never parsed (each would make a
//!    tree deep enough to exhaust the stack).
//! 3. Parsing with `sqlparser` in the dialect asked for (GenericDialect as a fallback when the
//!    dialect's parser refuses, seed 003's cascade). Every statement is parsed exactly once.
//! 4. Lineage ([`lineage`]): one walk over each statement's tree. Column sources are found by
//!    resolving each column reference of the expression that computes a target column through the
//!    scopes of the query (CTEs, derived tables, lateral/table functions, outer queries for
//!    correlated subqueries) down to base-table columns.
//! 5. [`mask_literals`] ([`mask`]): the statement as stored, with every literal replaced by `?`.
//!
//! Rules chosen where the contract is silent (see also [`analyze`]):
//!
//! - **Names.** Table names are qualified with the defaults (a 1-part name gets `schema.` and then
//!   `database.` in front, a 2-part name `database.`), folded as the dialect folds unquoted
//!   identifiers, quotes removed. Column names fold the same way. A BigQuery back-quoted
//!   `` `project.dataset.table` `` counts as three parts. T-SQL `#temp` and `@table` variables are
//!   never qualified. `USE db` (and Snowflake's `USE SCHEMA`) changes the defaults for the rest of
//!   the call, and so does Postgres's and Redshift's `SET search_path TO s, ...` (its first
//!   schema); in Spark/Databricks `USE [DATABASE|SCHEMA] s` sets the schema (a database is a
//!   schema there) and `USE CATALOG c` the catalog. Snowflake's and Databricks'
//!   `IDENTIFIER('db.s.t')` is the table `db.s.t`; `IDENTIFIER($var)` is an error (the table is
//!   not known before the statement runs), never a table. The catalog ([`Columns`]) is asked with
//!   the qualified, folded name.
//! - **Target columns without a name.** An `INSERT` without a column list whose target's columns
//!   are unknown names its columns by the select list; an expression without a name of its own
//!   (`a + b`, `max(a)`), and a second column of a name already taken, by its position (`_col2`),
//!   so no pair is lost or merged. With the catalog, the target's column at that position.
//! - **CTEs.** A CTE nothing in the statement reads is no source (its query never runs); a CTE that
//!   reads itself (`WITH RECURSIVE`, or a `UNION` without the keyword in T-SQL, Oracle and
//!   Snowflake) is no table named after it.
//! - **Invalid SQL** is an error with no lineage, even where the parser would go on: a CTE
//!   without `AS` (allowed in Spark only), a `UNION` of queries of different widths.
//! - **Intermediate tables** collapse: a table created in the call with `TEMP`/`TEMPORARY`/
//!   `VOLATILE`, a T-SQL `#temp` or `@table`, a `CREATE TEMP VIEW`, or any table or view created in
//!   the call and dropped later in the same call. Later statements that read one report its sources
//!   instead of it, and its columns' sources instead of its columns; the statements that write it
//!   are still reported, with [`StatementLineage::intermediate`] set. A persistent table created in
//!   the call is a base table like any other: it is reported as a source, its columns are sources.
//!   A persistent view created in the call is reported as a source, but column lineage goes
//!   through it to the columns it reads (the contract: "through ... views of the same call").
//! - **Self-reads.** A target is never a source of its own statement. A column whose only source
//!   was itself (`SET total = total * 2`, `INSERT INTO t SELECT a FROM t`) is not reported at all,
//!   so the statement leaves that column's earlier lineage alone; `t.a <- t.b` within one table is
//!   kept.
//! - **Ambiguity.** An unqualified column resolves to the only relation that has it (catalog
//!   columns, CTE and subquery outputs, tables created earlier in the call); failing that, to the
//!   only relation whose columns are unknown; failing that, to an earlier select-list alias
//!   (lateral alias), then to an outer query. Otherwise it is reported in `unresolved` and
//!   contributes no source.
//! - **Statements the parser does not take** are rewritten first: a Hive/Spark multi-insert
//!   (`FROM src INSERT ... SELECT ... INSERT ... SELECT ...`) becomes one `INSERT ... SELECT ...
//!   FROM src` per insert, reported as one entry with several targets, each with its own
//!   columns (the operation is the first insert's); T-SQL `INSERT INTO t EXEC proc` reports `t`
//!   as its target with no sources and an `unresolved` note naming the procedure.
//! - **Renames.** `ALTER TABLE a RENAME TO b` and MySQL `RENAME TABLE a TO b` are operation
//!   `RENAME`, target `b`, source `a` (and, when `a`'s columns are known, each column of `b` from
//!   its namesake), so a caller can move lineage; a 1-part new name stays in `a`'s schema.
//! - **Swaps.** Snowflake `ALTER TABLE a SWAP WITH b` is operation `SWAP`, target `a`, source `b`
//!   (each column of `a` from its namesake in `b` when known): `a` now holds what `b` held, the
//!   usual end of building a staging table. A caller that also tracks `b` swaps its lineage back.
//! - **Appends.** Redshift `ALTER TABLE t APPEND FROM s` is an `INSERT_INTO` of `t` from `s` with
//!   columns matched by name (as `INSERT INTO t BY NAME SELECT * FROM s`).
//! - **`LIKE`.** `CREATE TABLE t LIKE s` / `(LIKE s INCLUDING ...)` copies a shape, not data:
//!   `CREATE_TABLE` with no source; later statements of the call know `t`'s columns.
//! - **Copies.** `CLONE` (Snowflake, BigQuery, Databricks) and BigQuery `CREATE TABLE t COPY s`
//!   are operation `CLONE`, source `s`, each column from its namesake when `s`'s are known.
//! - **Writes to a location** (`UNLOAD ... TO`, `COPY ... TO 'file'`, Snowflake `COPY INTO @stage`,
//!   `INSERT OVERWRITE DIRECTORY`, BigQuery `EXPORT DATA`) name the path as the target and as
//!   `external_location`. Loads (`COPY t FROM`, `COPY INTO t`, `LOAD DATA`, T-SQL `BULK INSERT`,
//!   Databricks' and Azure Synapse's `COPY INTO`) name the file or stage as a source and as
//!   `external_location`, the table as the target. `TRUNCATE t` names `t` as its target (as a
//!   `DELETE` does), with no source.
//! - **T-SQL `OUTPUT ... INTO t`** makes `t` a second target of the INSERT, UPDATE, DELETE or
//!   MERGE: `inserted.c` is what the statement wrote to `c` (the changed table's `c` when it did
//!   not write it), `deleted.c` the changed table's `c`; `$action` has no source. An `@table`
//!   variable filled that way collapses into the statements that read it.
//! - **Upserts.** `ON CONFLICT DO UPDATE` / `ON DUPLICATE KEY UPDATE` assignments are writes of
//!   the same statement: `EXCLUDED.c`, `VALUES(c)`, MySQL's row alias and an unqualified `c` are
//!   the inserted row's `c`.
//! - **Dynamic SQL** given whole as one literal (`EXECUTE IMMEDIATE '...'`, `EXEC sp_executesql
//!   N'...'`) is analysed as the statements in the literal; one built from pieces is skipped.
//!   Snowflake `CREATE TASK|PIPE ... AS <statement>` is analysed as that statement.
//! - **Triggers.** In a trigger's body, T-SQL's `inserted`/`deleted` and `NEW.c`/`OLD.c`
//!   (`:NEW.c` in Oracle) are the rows of the table the trigger is on.
//! - **Writes through a CTE** (`WITH c AS (SELECT ... FROM t) DELETE FROM c`) write `t` when `c`
//!   reads one table. An `INSERT ... RETURNING` inside a `WITH` is reported as one more target.
//! - **PIVOT / UNPIVOT.** A pivoted value column is computed like `agg(CASE WHEN k = v THEN x
//!   END)`, so from the aggregate's columns and the `FOR` column; it is named by its alias, else
//!   by the value (`value_alias` with several aggregates). An UNPIVOT value column copies the
//!   unpivoted columns (like a UNION of them), its name column has no source. Other columns pass
//!   through. `dual` is no table.
//! - **Every input index has at least one entry**, in input order; a script in one string, or a
//!   procedure, may give several entries with the same index.
//!
//! [`query_log`] reads the CSV files `import-query-log` takes (query logs, view and procedure
//! definitions) into the statements, defaults, users and query ids their rows hold.

mod lexer;
mod lineage;
mod mask;
pub mod query_log;
mod split;

#[cfg(test)]
mod tests;

use std::collections::HashSet;

use sqlparser::ast::Statement;
use sqlparser::parser::Parser;

pub use mask::mask_literals;
pub use split::{split_statements, unwrap_procedure};

/// The SQL dialects of seed 003's dialect mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    Postgres,
    Redshift,
    MySql,
    MariaDb,
    Snowflake,
    BigQuery,
    TSql,
    SparkSql,
    Hive,
    Oracle,
    Trino,
    Ansi,
}

impl Dialect {
    /// The dialect named `name`, case-insensitive, with the contract's aliases.
    pub fn parse(name: &str) -> Option<Dialect> {
        let n = name.trim().to_ascii_lowercase();
        Some(match n.as_str() {
            "postgres" | "postgresql" | "pg" => Dialect::Postgres,
            "redshift" => Dialect::Redshift,
            "mysql" => Dialect::MySql,
            "mariadb" => Dialect::MariaDb,
            "snowflake" => Dialect::Snowflake,
            "bigquery" => Dialect::BigQuery,
            "tsql" | "mssql" | "sqlserver" => Dialect::TSql,
            "sparksql" | "spark" | "databricks" => Dialect::SparkSql,
            "hive" => Dialect::Hive,
            "oracle" => Dialect::Oracle,
            "trino" | "presto" => Dialect::Trino,
            "ansi" | "generic" => Dialect::Ansi,
            _ => return None,
        })
    }

    /// The dialect of a datastore `type` (seed 003, "Dialect Mapping"): `postgresql`, `redshift`,
    /// `sql server`, `azure sql`, `databricks`, ... Spaces, dashes and underscores are ignored.
    pub fn for_datastore_type(t: &str) -> Option<Dialect> {
        let n: String = t.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        Some(match n.as_str() {
            "postgres" | "postgresql" | "aurorapostgres" | "aurorapostgresql" | "greenplum" | "timescale"
            | "timescaledb" | "cockroachdb" => Dialect::Postgres,
            "redshift" => Dialect::Redshift,
            "mysql" | "auroramysql" | "singlestore" | "tidb" => Dialect::MySql,
            "mariadb" => Dialect::MariaDb,
            "snowflake" => Dialect::Snowflake,
            "bigquery" => Dialect::BigQuery,
            "sqlserver" | "mssql" | "tsql" | "azuresql" | "azuresqldatabase" | "synapse" | "azuresynapse" => {
                Dialect::TSql
            }
            "hive" | "impala" => Dialect::Hive,
            "spark" | "sparksql" | "databricks" | "deltalake" | "unitycatalog" => Dialect::SparkSql,
            "oracle" => Dialect::Oracle,
            "trino" | "presto" | "athena" | "starburst" => Dialect::Trino,
            "ansi" | "generic" => Dialect::Ansi,
            _ => return None,
        })
    }

    /// Snowflake and Oracle fold unquoted identifiers to upper case.
    pub fn folds_upper(&self) -> bool {
        matches!(self, Dialect::Snowflake | Dialect::Oracle)
    }

    /// Postgres, Redshift and Trino fold unquoted identifiers to lower case; the others keep them.
    pub fn folds_lower(&self) -> bool {
        matches!(self, Dialect::Postgres | Dialect::Redshift | Dialect::Trino)
    }

    fn parser_dialect(&self) -> Box<dyn sqlparser::dialect::Dialect> {
        use sqlparser::dialect as d;
        match self {
            Dialect::Postgres => Box::new(d::PostgreSqlDialect {}),
            Dialect::Redshift => Box::new(d::RedshiftSqlDialect {}),
            Dialect::MySql | Dialect::MariaDb => Box::new(d::MySqlDialect {}),
            Dialect::Snowflake => Box::new(d::SnowflakeDialect),
            Dialect::BigQuery => Box::new(d::BigQueryDialect),
            Dialect::TSql => Box::new(d::MsSqlDialect {}),
            Dialect::SparkSql => Box::new(d::SparkSqlDialect),
            Dialect::Hive => Box::new(d::HiveDialect {}),
            Dialect::Oracle => Box::new(d::OracleDialect),
            Dialect::Trino | Dialect::Ansi => Box::new(d::GenericDialect),
        }
    }
}

/// What [`analyze`] assumes about the statements' context, and its caps.
#[derive(Debug, Clone)]
pub struct Options {
    /// Prepended to 2-part names, and after the schema to 1-part names.
    pub default_database: Option<String>,
    /// Prepended to 1-part names.
    pub default_schema: Option<String>,
    /// A statement longer than this (bytes) is reported as an error without being parsed.
    pub max_statement_bytes: usize,
    /// A statement with parentheses (and so subqueries) nested deeper than this is reported as an
    /// error without being parsed; counted on the text.
    pub max_nesting: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { default_database: None, default_schema: None, max_statement_bytes: 1 << 20, max_nesting: 200 }
    }
}

/// A catalog view for `SELECT *` expansion and column resolution: the columns of a table, when
/// known. `table` is the qualified, folded name, as it appears in [`StatementLineage::sources`].
pub trait Columns {
    fn columns(&self, table: &str) -> Option<Vec<String>>;
}

/// No catalog: every table's columns are unknown.
pub struct NoColumns;

impl Columns for NoColumns {
    fn columns(&self, _table: &str) -> Option<Vec<String>> {
        None
    }
}

impl<S: std::hash::BuildHasher> Columns for std::collections::HashMap<String, Vec<String>, S> {
    fn columns(&self, table: &str) -> Option<Vec<String>> {
        self.get(table).or_else(|| self.iter().find(|(k, _)| k.eq_ignore_ascii_case(table)).map(|(_, v)| v)).cloned()
    }
}

/// What one statement means.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatementLineage {
    /// Index of the statement in the input.
    pub index: usize,
    /// `CTAS`, `INSERT_INTO`, `INSERT_OVERWRITE`, `MERGE_INTO`, `VIEW`, `UPDATE`, `DELETE`,
    /// `SELECT`, `CREATE_TABLE`, `CREATE_EXTERNAL_TABLE`, `CLONE`, `RENAME`, `SWAP`, `COPY`, `UNLOAD`, `LOAD`, `USE`,
    /// `DROP`, `CREATE_PROCEDURE`, `EMPTY`, `UNKNOWN` (did not parse), or the statement's first
    /// keyword for the rest.
    pub operation: String,
    pub targets: Vec<String>,
    /// Tables read, sorted; never a target of the same statement.
    pub sources: Vec<String>,
    pub columns: Vec<ColumnLineage>,
    pub errors: Vec<String>,
    /// What could not be resolved: `SELECT *` over a table of unknown columns, ambiguous or unknown
    /// column references.
    pub unresolved: Vec<String>,
    /// The statement with every literal replaced by `?`.
    pub masked_sql: String,
    /// `LOCATION` of an external table, the stage or file of a `COPY`/`UNLOAD`/`LOAD`.
    pub external_location: Option<String>,
    /// The procedure whose body this statement came from.
    pub procedure: Option<String>,
    /// The target is an intermediate table of this call (see the module comment): later statements
    /// already report its sources in its place, so a caller recording edges may skip this one.
    pub intermediate: bool,
}

/// The lineage of one target column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnLineage {
    /// `<table as in targets>.<column>`.
    pub target: String,
    /// `<table>.<column>`, sorted, deduplicated.
    pub sources: Vec<String>,
    /// False only for a bare column reference (through aliases, CTEs and subqueries).
    pub derived: bool,
}

/// One piece of work: a statement to parse and analyse, or an entry decided without parsing.
struct Unit {
    index: usize,
    text: String,
    procedure: Option<String>,
    /// Keep only entries that write something (procedure bodies, control-flow blocks).
    lineage_only: bool,
    parsed: Result<Vec<Statement>, String>,
    /// Decided without parsing: (operation, errors, unresolved).
    fixed: Option<(String, Vec<String>, Vec<String>)>,
    /// The text as given, when `text` is a rewrite of it (masked and stored instead).
    original: Option<String>,
    /// Part of the previous unit's statement (a Hive multi-insert): merged into its entry.
    joins_previous: bool,
    /// Reported as unresolved with the statement.
    note: Option<String>,
    /// The table of the trigger whose body this statement came from (`ON t`).
    trigger: Option<String>,
}

/// The longest run of operators (`a + b + ...`, `x = 1 OR x = 2 OR ...`) in one expression that is
/// parsed. The parser builds such a run as a tree as deep as the run is long, and walking or
/// dropping it recurses that deep: at about 35,000 a 2 MiB thread stack (a test thread, a tokio
/// worker) overflows in a debug build. Checked on the text with [`Options::max_nesting`].
pub const MAX_OPERATOR_RUN: usize = 15_000;

const SQL_LANGUAGES: &[&str] = &["sql", "plpgsql", "plsql", "tsql", "transact-sql", "spl"];

/// Statement keywords that make a piece procedural: its data-moving statements are extracted.
fn procedural(text: &str, dialect: Dialect) -> Option<String> {
    let mut toks = lexer::Lexer::new(text, dialect).filter(lexer::Token::significant);
    let first = toks.next()?;
    let second = toks.next();
    let w = first.text(text).to_ascii_uppercase();
    match w.as_str() {
        "IF" | "WHILE" | "LOOP" | "FOR" | "REPEAT" | "ELSE" | "ELSEIF" | "ELSIF" => Some(text.to_string()),
        // The `END IF;` of a block split at its inner `;`s.
        "END" if dialect != Dialect::TSql => Some(text.to_string()),
        "DECLARE" if dialect != Dialect::TSql => Some(text.to_string()),
        "BEGIN" => {
            let s = second?;
            let sw = s.text(text).to_ascii_uppercase();
            if s.is_punct(text, b';') || matches!(sw.as_str(), "TRAN" | "TRANSACTION" | "WORK" | "ISOLATION" | "READ") {
                None
            } else {
                Some(text.to_string())
            }
        }
        "EXECUTE" | "EXEC" if dialect != Dialect::Postgres => dynamic_sql(text, dialect).or_else(|| dollar_body(text)),
        "DO" => dollar_body(text),
        // Snowflake `CREATE [OR REPLACE] TASK|PIPE name ... AS <statement>`: the statement runs.
        "CREATE" if dialect == Dialect::Snowflake => {
            let toks: Vec<lexer::Token> =
                lexer::Lexer::new(text, dialect).filter(lexer::Token::significant).take(64).collect();
            let kind = toks.iter().take(4).position(|t| t.is_kw(text, "TASK") || t.is_kw(text, "PIPE"))?;
            let mut depth = 0i32;
            for (i, t) in toks.iter().enumerate().skip(kind + 1) {
                if t.is_punct(text, b'(') {
                    depth += 1;
                } else if t.is_punct(text, b')') {
                    depth -= 1;
                } else if depth == 0 && t.is_kw(text, "AS") {
                    let next = toks.get(i + 1)?;
                    return text.get(next.start..).map(str::to_string);
                }
            }
            None
        }
        _ => None,
    }
}

/// Dynamic SQL given whole as one literal: `EXECUTE IMMEDIATE 'INSERT ...'` (Oracle, BigQuery,
/// Snowflake), T-SQL `EXEC sp_executesql N'...'`: the literal's text. `None` when the statement
/// is built from pieces (its text is not known before it runs).
fn dynamic_sql(text: &str, dialect: Dialect) -> Option<String> {
    let toks: Vec<lexer::Token> = lexer::Lexer::new(text, dialect).filter(lexer::Token::significant).collect();
    let first = toks.first()?.text(text).to_ascii_uppercase();
    if first != "EXEC" && first != "EXECUTE" {
        return None;
    }
    // T-SQL `EXEC ('...')`.
    if toks.get(1).is_some_and(|t| t.is_punct(text, b'(')) {
        let lit = toks.get(2).filter(|t| t.kind == lexer::Kind::Str)?;
        toks.get(3).filter(|t| t.is_punct(text, b')'))?;
        let raw = lit.text(text);
        return Some(split::unquote_string(raw.strip_prefix(['N', 'n']).unwrap_or(raw)));
    }
    let second = toks.get(1)?.text(text).to_ascii_uppercase();
    if second != "IMMEDIATE" && !second.ends_with("SP_EXECUTESQL") {
        return None;
    }
    let lit = toks.get(2).filter(|t| t.kind == lexer::Kind::Str)?;
    let alone = toks.get(3).is_none_or(|t| {
        t.is_punct(text, b';') || t.is_punct(text, b',') || t.is_kw(text, "USING") || t.is_kw(text, "INTO")
    });
    if !alone {
        return None;
    }
    let raw = lit.text(text);
    let raw = raw.strip_prefix(['N', 'n']).unwrap_or(raw);
    Some(split::unquote_string(raw))
}

/// A statement of a procedure body, or the statements of the dynamic SQL it runs (one level).
fn expand_dynamic(stmt: String, dialect: Dialect) -> Vec<String> {
    match dynamic_sql(&stmt, dialect) {
        Some(inner) => split::body_statements(&inner, dialect).into_iter().map(|(_, s)| s).collect(),
        // Built from pieces: what it runs is not known.
        None if matches!(first_word(&stmt, dialect).as_str(), "EXEC" | "EXECUTE") => Vec::new(),
        None => vec![stmt],
    }
}

/// The inside of the first `$tag$ ... $tag$` in `text`: `DO $$ ... $$`, Snowflake `EXECUTE
/// IMMEDIATE $$ ... $$`.
fn dollar_body(text: &str) -> Option<String> {
    let body = lexer::Lexer::new(text, Dialect::Postgres).find(|t| t.kind == lexer::Kind::Dollar)?;
    let b = body.text(text);
    let open = b.get(1..).and_then(|r| r.find('$')).map(|p| p + 2)?;
    let inner = b.get(open..b.len().saturating_sub(open))?;
    Some(inner.to_string())
}

fn parse(
    text: &str,
    dialect: &dyn sqlparser::dialect::Dialect,
    fallback: bool,
    limit: usize,
) -> Result<Vec<Statement>, String> {
    let run = |d: &dyn sqlparser::dialect::Dialect| {
        Parser::new(d).with_recursion_limit(limit).try_with_sql(text).and_then(|mut p| p.parse_statements())
    };
    match run(dialect) {
        Ok(s) => Ok(s),
        Err(e) if fallback => run(&sqlparser::dialect::GenericDialect)
            .or_else(|_| {
                // Oracle's `INSERT ALL|FIRST ... SELECT` is taken only by the Snowflake parser,
                // `LOAD DATA` (rewritten from MySQL's and BigQuery's) only by Hive's, `USE CATALOG`
                // only by Databricks'.
                let mut words = text.split_whitespace().map(str::to_ascii_uppercase);
                match (words.next().as_deref(), words.next().as_deref()) {
                    (Some("INSERT"), Some("ALL" | "FIRST")) => run(&sqlparser::dialect::SnowflakeDialect),
                    (Some("LOAD"), Some("DATA")) => run(&sqlparser::dialect::HiveDialect {}),
                    // Databricks `USE CATALOG|DATABASE|SCHEMA x`.
                    (Some("USE"), Some("CATALOG" | "DATABASE" | "SCHEMA")) => {
                        run(&sqlparser::dialect::DatabricksDialect {})
                    }
                    _ => Err(e.clone()),
                }
            })
            .map_err(|_| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn first_word(text: &str, dialect: Dialect) -> String {
    lexer::Lexer::new(text, dialect)
        .find(lexer::Token::significant)
        .map(|t| t.text(text).to_ascii_uppercase())
        .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_'))
        .unwrap_or_else(|| "UNKNOWN".to_string())
}

/// `SELECT ... INTO v` (or T-SQL's `SELECT @v = ...`) of a procedure body: an assignment of
/// variables, not rows returned.
fn assigns_variables(st: &Statement) -> bool {
    use sqlparser::ast::{BinaryOperator, Expr, SelectItem, SetExpr};
    let Statement::Query(q) = st else { return false };
    let SetExpr::Select(s) = &*q.body else { return false };
    s.into.is_some()
        || s.projection.iter().any(|i| match i {
            SelectItem::ExprWithAlias { alias, .. } => alias.value.starts_with('@'),
            SelectItem::UnnamedExpr(Expr::BinaryOp { left, op: BinaryOperator::Eq, .. }) => {
                matches!(&**left, Expr::Identifier(id) if id.value.starts_with('@'))
            }
            _ => false,
        })
}

/// Statements that read and write no table whatever their arguments (Spark's `ADD JAR`, `DESC
/// FUNCTION f`, `REFRESH TABLE t`, `SET key` without a value, `SHOW FUNCTIONS f`, `LIST FILE`,
/// `CLEAR CACHE`, `RESET`): when the parser refuses one, it is still no error.
fn no_lineage(text: &str, dialect: Dialect) -> bool {
    let words: Vec<String> = lexer::Lexer::new(text, dialect)
        .filter(lexer::Token::significant)
        .take(3)
        .map(|t| t.text(text).to_ascii_uppercase())
        .collect();
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match w(0) {
        "SHOW" | "DESC" | "DESCRIBE" | "REFRESH" | "RESET" | "LIST" => true,
        "ADD" => matches!(w(1), "JAR" | "JARS" | "FILE" | "FILES" | "ARCHIVE" | "ARCHIVES"),
        "CLEAR" => w(1) == "CACHE",
        // `SET key` (shows the value); `SET key = value` parses.
        "SET" => !text.contains('='),
        _ => false,
    }
}

/// Adds one part of a multi-insert to the entry of the parts before it.
fn merge_into(prev: &mut StatementLineage, r: lineage::StmtResult) {
    for t in r.targets {
        if !prev.targets.contains(&t) {
            prev.targets.push(t);
        }
    }
    let targets: HashSet<String> = prev.targets.iter().map(|t| t.to_lowercase()).collect();
    prev.sources.extend(r.sources);
    prev.sources.retain(|s| !targets.contains(&s.to_lowercase()));
    prev.sources.sort();
    prev.sources.dedup();
    prev.columns.extend(r.columns);
    for u in r.unresolved {
        if !prev.unresolved.contains(&u) {
            prev.unresolved.push(u);
        }
    }
    prev.intermediate |= r.intermediate;
}

/// What each statement means; see the module comment for the rules. `statements` are analysed in
/// order as one call: tables created by one are known to the next.
pub fn analyze(
    statements: &[String],
    dialect: Dialect,
    options: &Options,
    catalog: &dyn Columns,
) -> Vec<StatementLineage> {
    let parser_dialect = dialect.parser_dialect();
    let fallback = !matches!(dialect, Dialect::Trino | Dialect::Ansi);
    let limit = options.max_nesting.saturating_mul(4).max(64);
    let mut units: Vec<Unit> = Vec::new();
    let push = |units: &mut Vec<Unit>, index: usize, text: String, procedure: Option<String>, only: bool| {
        let parsed = match split::cte_without_as(&text, dialect) {
            Some(e) => Err(e),
            None => parse(&text, &*parser_dialect, fallback, limit),
        };
        units.push(Unit {
            index,
            text,
            procedure,
            lineage_only: only,
            parsed,
            fixed: None,
            original: None,
            joins_previous: false,
            note: None,
            trigger: None,
        });
    };
    // A statement the parser does not take, rewritten into ones it does.
    let push_rewritten = |units: &mut Vec<Unit>, index: usize, piece: &str, procedure: Option<String>, only: bool| {
        if let Some(parts) = split::multi_insert(piece, dialect) {
            for (k, part) in parts.into_iter().enumerate() {
                push(units, index, part, procedure.clone(), only);
                if let Some(u) = units.last_mut() {
                    u.original = Some(piece.to_string());
                    u.joins_previous = k > 0;
                }
            }
            return true;
        }
        if let Some(text) = split::rewrite(piece, dialect) {
            push(units, index, text, procedure, only);
            if let Some(u) = units.last_mut() {
                u.original = Some(piece.to_string());
            }
            return true;
        }
        if dialect == Dialect::TSql {
            if let Some((text, called)) = split::insert_exec(piece, dialect) {
                push(units, index, text, procedure, only);
                if let Some(u) = units.last_mut() {
                    u.original = Some(piece.to_string());
                    u.note = Some(format!("INSERT ... EXEC {called}: what the procedure returns is not known"));
                }
                return true;
            }
        }
        false
    };
    for (index, sql) in statements.iter().enumerate() {
        let fixed =
            |op: &str, errors: Vec<String>, unresolved: Vec<String>, text: &str, procedure: Option<String>| Unit {
                index,
                text: text.to_string(),
                procedure,
                lineage_only: false,
                parsed: Ok(Vec::new()),
                fixed: Some((op.to_string(), errors, unresolved)),
                original: None,
                joins_previous: false,
                note: None,
                trigger: None,
            };
        if sql.len() > options.max_statement_bytes {
            let e = format!(
                "statement is {} bytes, over the limit of {} bytes; not parsed",
                sql.len(),
                options.max_statement_bytes
            );
            // Mask only a bounded prefix: the text is not parsed, and not kept whole either.
            let mut cut = options.max_statement_bytes.min(sql.len()).min(4096);
            while !sql.is_char_boundary(cut) {
                cut -= 1;
            }
            units.push(fixed("UNKNOWN", vec![e], vec![], sql.get(..cut).unwrap_or(""), None));
            continue;
        }
        let shape = lexer::shape(sql, dialect, options.max_nesting, MAX_OPERATOR_RUN);
        if shape.depth > options.max_nesting {
            let e = format!("parentheses nested deeper than {}; not parsed", options.max_nesting);
            units.push(fixed("UNKNOWN", vec![e], vec![], sql, None));
            continue;
        }
        if shape.chain > MAX_OPERATOR_RUN {
            let e = format!("more than {MAX_OPERATOR_RUN} operators in one expression without a comma; not parsed");
            units.push(fixed("UNKNOWN", vec![e], vec![], sql, None));
            continue;
        }
        let pieces = split_statements(sql, dialect);
        if pieces.is_empty() {
            units.push(fixed("EMPTY", vec![], vec![], sql, None));
            continue;
        }
        for (_, piece) in pieces {
            if let Some(routine) = split::procedure_parts(&piece, dialect) {
                let lang_ok = routine.language.as_deref().is_none_or(|l| SQL_LANGUAGES.contains(&l));
                if !lang_ok {
                    let note = format!(
                        "body of {} in language {} not analysed",
                        routine.name,
                        routine.language.as_deref().unwrap_or("")
                    );
                    units.push(fixed("CREATE_PROCEDURE", vec![], vec![note], &piece, Some(routine.name)));
                    continue;
                }
                let body = split::body_statements(&routine.body, dialect);
                if body.is_empty() {
                    units.push(fixed("CREATE_PROCEDURE", vec![], vec![], &piece, Some(routine.name.clone())));
                }
                let trigger = split::trigger_table(&piece, dialect);
                for (_, stmt) in body {
                    for stmt in expand_dynamic(stmt, dialect) {
                        if !push_rewritten(&mut units, index, &stmt, Some(routine.name.clone()), true) {
                            push(&mut units, index, stmt, Some(routine.name.clone()), true);
                        }
                        if let Some(u) = units.last_mut() {
                            u.trigger.clone_from(&trigger);
                        }
                    }
                }
            } else if let Some(body) = procedural(&piece, dialect) {
                for (_, stmt) in split::body_statements(&body, dialect) {
                    for stmt in expand_dynamic(stmt, dialect) {
                        if !push_rewritten(&mut units, index, &stmt, None, true) {
                            push(&mut units, index, stmt, None, true);
                        }
                    }
                }
            } else if !push_rewritten(&mut units, index, &piece, None, false) {
                push(&mut units, index, piece, None, false);
            }
        }
    }

    let intermediate =
        lineage::intermediate_tables(units.iter().filter_map(|u| u.parsed.as_ref().ok()).flatten(), dialect, options);
    let mut an = lineage::Analyzer::new(dialect, options, catalog, intermediate);
    let mut out: Vec<StatementLineage> = Vec::with_capacity(units.len());
    let mut seen: HashSet<usize> = HashSet::new();
    for (n, u) in units.iter().enumerate() {
        if u.joins_previous {
            if let Some(prev) = out.last_mut().filter(|p| p.index == u.index) {
                match &u.parsed {
                    Err(e) => prev.errors.push(e.clone()),
                    Ok(stmts) => {
                        for st in stmts {
                            let r = an.statement(st, "INSERT");
                            merge_into(prev, r);
                        }
                    }
                }
                continue;
            }
        }
        let base = StatementLineage {
            index: u.index,
            masked_sql: mask_literals(u.original.as_deref().unwrap_or(&u.text), dialect),
            procedure: u.procedure.clone(),
            ..StatementLineage::default()
        };
        if let Some((op, errors, unresolved)) = &u.fixed {
            seen.insert(u.index);
            out.push(StatementLineage {
                operation: op.clone(),
                errors: errors.clone(),
                unresolved: unresolved.clone(),
                ..base
            });
            continue;
        }
        match &u.parsed {
            // Statements that move no data in any engine, in forms the parser does not take.
            Err(_) if no_lineage(&u.text, dialect) => {
                seen.insert(u.index);
                out.push(StatementLineage { operation: first_word(&u.text, dialect), ..base });
            }
            Err(e) => {
                seen.insert(u.index);
                out.push(StatementLineage { operation: "UNKNOWN".into(), errors: vec![e.clone()], ..base });
            }
            Ok(stmts) => {
                an.in_procedure = u.lineage_only;
                an.set_trigger(u.trigger.as_deref());
                let word = first_word(&u.text, dialect);
                for st in stmts {
                    let r = an.statement(st, &word);
                    // A bare `SELECT` of a procedure body reads its tables (it returns rows to the
                    // caller); other pieces of control flow that write nothing are left out.
                    let procedure_read = u.procedure.is_some()
                        && r.operation == "SELECT"
                        && !r.sources.is_empty()
                        && !assigns_variables(st);
                    if u.lineage_only && r.targets.is_empty() && !procedure_read {
                        continue;
                    }
                    seen.insert(u.index);
                    let mut unresolved = r.unresolved;
                    unresolved.extend(u.note.iter().cloned());
                    let (mut targets, mut sources, mut columns) = (r.targets, r.sources, r.columns);
                    let mut errors = r.errors;
                    // `IDENTIFIER($t)`: a table named by a variable is not known; the parser's
                    // stand-in for it (`identifier`, or an empty name) is no table.
                    for v in split::identifier_variables(&u.text, dialect) {
                        errors.push(format!(
                            "IDENTIFIER({v}): the table is named by a value known only when the statement runs"
                        ));
                        let stand_in = |t: &String| {
                            let last = t.rsplit('.').next().unwrap_or("");
                            last.is_empty() || last.eq_ignore_ascii_case("identifier")
                        };
                        targets.retain(|t| !stand_in(t));
                        sources.retain(|t| !stand_in(t));
                        columns.retain(|c| c.target.rsplit_once('.').is_some_and(|(t, _)| !stand_in(&t.to_string())));
                        for c in &mut columns {
                            c.sources.retain(|s| s.rsplit_once('.').is_some_and(|(t, _)| !stand_in(&t.to_string())));
                        }
                    }
                    out.push(StatementLineage {
                        operation: r.operation,
                        targets,
                        sources,
                        columns,
                        errors,
                        unresolved,
                        external_location: r.external_location,
                        intermediate: r.intermediate,
                        ..base.clone()
                    });
                }
            }
        }
        // Every input index gets an entry, even a procedure or block that moved no data.
        let last_of_index = units.get(n + 1).is_none_or(|next| next.index != u.index);
        if last_of_index && !seen.contains(&u.index) {
            seen.insert(u.index);
            let op = if u.procedure.is_some() {
                "CREATE_PROCEDURE".to_string()
            } else {
                first_word(&statements[u.index], dialect)
            };
            out.push(StatementLineage {
                index: u.index,
                operation: op,
                masked_sql: mask_literals(&statements[u.index], dialect),
                procedure: u.procedure.clone(),
                ..StatementLineage::default()
            });
        }
    }
    // Inputs that produced no unit at all (a block with nothing inside).
    for (index, sql) in statements.iter().enumerate() {
        if !seen.contains(&index) {
            out.push(StatementLineage {
                index,
                operation: first_word(sql, dialect),
                masked_sql: mask_literals(sql, dialect),
                ..StatementLineage::default()
            });
        }
    }
    out.sort_by_key(|s| s.index);
    out
}
