//! Unit tests of issue #34's fixes: statements from sqllineage's suite and other cases nobody on
//! the team wrote that Tributary refused, misread or read silently short. Each failed before its
//! fix.

use std::collections::HashMap;

use super::super::*;

fn run(sql: &str, dialect: Dialect) -> Vec<StatementLineage> {
    analyze(&[sql.to_string()], dialect, &Options::default(), &NoColumns)
}

fn run_all(statements: &[&str], dialect: Dialect, options: &Options) -> Vec<StatementLineage> {
    let statements: Vec<String> = statements.iter().map(|s| s.to_string()).collect();
    analyze(&statements, dialect, options, &NoColumns)
}

/// The only entry of `sql`, which must have no errors.
fn one(sql: &str, dialect: Dialect) -> StatementLineage {
    let mut got = run(sql, dialect);
    assert_eq!(got.len(), 1, "{sql}: {got:#?}");
    let e = got.remove(0);
    assert!(e.errors.is_empty(), "{sql}: {:?}", e.errors);
    e
}

fn cols(e: &StatementLineage) -> Vec<(String, Vec<String>)> {
    e.columns.iter().map(|c| (c.target.clone(), c.sources.clone())).collect()
}

fn col(target: &str, sources: &[&str]) -> (String, Vec<String>) {
    (target.to_string(), sources.iter().map(|s| s.to_string()).collect())
}

#[test]
fn bigquery_procedure_without_as_and_begin_on_its_own_line() {
    let got = run(
        "CREATE PROCEDURE proc1()\n\nBEGIN\nINSERT INTO tab2 (col1) SELECT col1 FROM tab1;\nEND",
        Dialect::BigQuery,
    );
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(got[0].errors.is_empty(), "{:?}", got[0].errors);
    assert_eq!((got[0].targets.clone(), got[0].sources.clone()), (vec!["tab2".into()], vec!["tab1".into()]));
    assert_eq!(got[0].procedure.as_deref(), Some("proc1"));
}

#[test]
fn spark_and_mysql_create_table_without_as() {
    for d in [Dialect::SparkSql, Dialect::Hive, Dialect::MySql] {
        let e = one("CREATE TABLE tab1 SELECT * FROM tab2", d);
        assert_eq!(
            (e.operation.as_str(), e.targets.clone(), e.sources.clone()),
            ("CTAS", vec!["tab1".into()], vec!["tab2".into()])
        );
    }
}

#[test]
fn hive_serde_properties_with_backslash_escapes() {
    let sql = r#"CREATE TABLE apachelog (host STRING, request STRING) ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.RegexSerDe' WITH SERDEPROPERTIES ("input.regex" = "([^]*) (-|\\[^\\]*\\]) ([^ \"]*|\"[^\"]*\")") STORED AS TEXTFILE"#;
    for d in [Dialect::Hive, Dialect::SparkSql] {
        let e = one(sql, d);
        assert_eq!(e.targets, vec!["apachelog".to_string()], "{d:?}");
    }
}

#[test]
fn hive_exchange_partition_moves_rows_into_the_table() {
    let e = one("ALTER TABLE tab1 EXCHANGE PARTITION (pt='part1') WITH TABLE tab2", Dialect::Hive);
    assert_eq!((e.targets.clone(), e.sources.clone()), (vec!["tab1".into()], vec!["tab2".into()]));
}

#[test]
fn tsql_compound_assignment_in_update() {
    let e = one(
        "UPDATE sr SET sr.Name += ' - tool malfunction', sr.Qty *= w.n FROM Production.ScrapReason AS sr JOIN Production.WorkOrder AS w ON sr.ScrapReasonID = w.ScrapReasonID",
        Dialect::TSql,
    );
    assert_eq!(e.targets, vec!["Production.ScrapReason".to_string()]);
    assert_eq!(e.sources, vec!["Production.WorkOrder".to_string()]);
    // `Name` only reads itself (no column entry, the contract's self-read rule); `Qty` reads `n`.
    assert_eq!(cols(&e), vec![col("Production.ScrapReason.Qty", &["Production.WorkOrder.n"])]);
}

#[test]
fn synapse_copy_into_reads_its_url() {
    let e = one(
        "COPY INTO tab1 FROM 'https://myaccount.blob.core.windows.net/c/folder1/' WITH (FILE_TYPE = 'CSV')",
        Dialect::TSql,
    );
    assert_eq!(e.targets, vec!["tab1".to_string()]);
    assert_eq!(e.sources, vec!["https://myaccount.blob.core.windows.net/c/folder1/".to_string()]);
}

#[test]
fn insert_into_a_parenthesized_query_with_ctes() {
    let e = one("INSERT INTO tab3 (WITH tab1 AS (SELECT a FROM tab2) SELECT a FROM tab1)", Dialect::Ansi);
    assert_eq!((e.targets.clone(), e.sources.clone()), (vec!["tab3".into()], vec!["tab2".into()]));
    assert_eq!(cols(&e), vec![col("tab3.a", &["tab2.a"])]);
}

#[test]
fn a_load_reads_its_path_or_stage() {
    for (sql, d, path) in [
        ("COPY tab1 FROM 's3://mybucket/mypath'", Dialect::Postgres, "s3://mybucket/mypath"),
        (
            "COPY tab1 FROM 's3://mybucket/mypath' IAM_ROLE 'arn:aws:iam::1:role/r'",
            Dialect::Redshift,
            "s3://mybucket/mypath",
        ),
        ("COPY INTO tab1 FROM 's3://mybucket/mypath'", Dialect::Snowflake, "s3://mybucket/mypath"),
        ("COPY INTO tab1 FROM 'gcs://bucket/p/'", Dialect::Snowflake, "gcs://bucket/p/"),
        ("COPY INTO tab1 FROM @my_stage/p/", Dialect::Snowflake, "@my_stage/p/"),
        ("LOAD DATA INPATH '/landing/f.csv' INTO TABLE tab1", Dialect::Hive, "/landing/f.csv"),
    ] {
        let e = one(sql, d);
        assert_eq!(e.sources, vec![path.to_string()], "{sql}");
        assert_eq!(e.external_location.as_deref(), Some(path), "{sql}");
        assert_eq!(e.targets.len(), 1, "{sql}");
    }
}

#[test]
fn tsql_old_style_table_hint_keeps_the_table() {
    let e = one("SELECT a FROM dbname.dto.tablename(NOLOCK)", Dialect::TSql);
    assert_eq!(e.sources, vec!["dbname.dto.tablename".to_string()]);
    let e = one("INSERT INTO t SELECT x.a FROM s.u x (NOLOCK, READPAST) JOIN s.v (NOLOCK) ON x.k = v.k", Dialect::TSql);
    assert_eq!(e.sources, vec!["s.u".to_string(), "s.v".to_string()]);
}

#[test]
fn a_bare_select_in_a_procedure_reads_its_tables() {
    for d in [Dialect::Oracle, Dialect::TSql, Dialect::BigQuery] {
        let sql = if d == Dialect::BigQuery {
            "CREATE PROCEDURE proc1()\nBEGIN\nSELECT col1 FROM tab1;\nEND"
        } else {
            "CREATE PROCEDURE proc1() AS BEGIN SELECT col1 FROM tab1; END"
        };
        let e = one(sql, d);
        let want = if d.folds_upper() { "TAB1" } else { "tab1" };
        assert_eq!((e.operation.as_str(), e.sources.clone()), ("SELECT", vec![want.into()]), "{d:?}");
        assert_eq!(e.procedure.as_deref(), Some("proc1"));
    }
    // Assigning variables is no read to report on its own.
    let got = run("CREATE PROCEDURE p AS BEGIN DECLARE @n INT; SELECT @n = COUNT(*) FROM t; END", Dialect::TSql);
    assert!(got.iter().all(|e| e.sources.is_empty()), "{got:#?}");
}

#[test]
fn statements_that_move_no_data_are_no_errors() {
    for sql in [
        "ADD JAR /tmp/SimpleUdf.jar",
        "DESC FUNCTION abs",
        "refresh table tab1",
        "SET spark.sql.variable.substitute",
        "SHOW FUNCTIONS trim",
    ] {
        let e = one(sql, Dialect::SparkSql);
        assert!(e.targets.is_empty() && e.sources.is_empty(), "{sql}: {e:?}");
    }
    // Anything else the parser refuses is still an error.
    assert!(!run("SELEC a FROM t", Dialect::SparkSql)[0].errors.is_empty());
}

#[test]
fn spark_query_of_files_reads_the_path() {
    for f in ["parquet", "json", "csv"] {
        // A relative path (a URL or an absolute path was read before).
        let e = one(&format!("INSERT INTO t SELECT * FROM {f}.`examples/src/main/resources/`"), Dialect::SparkSql);
        assert_eq!(e.sources, vec!["examples/src/main/resources/".to_string()], "{f}");
    }
}

#[test]
fn target_columns_without_a_name_are_named_by_position() {
    // Before: `col1 + col2` wrote no column, and `max(a), max(b)` merged into one `t.max`.
    let e = one("INSERT INTO t SELECT col1 + col2 FROM s", Dialect::Ansi);
    assert_eq!(cols(&e), vec![col("t._col1", &["s.col1", "s.col2"])]);
    let e = one("INSERT INTO t SELECT max(a), max(b), c, c AS d FROM s", Dialect::Ansi);
    assert_eq!(
        cols(&e),
        vec![col("t._col1", &["s.a"]), col("t._col2", &["s.b"]), col("t.c", &["s.c"]), col("t.d", &["s.c"])]
    );
    // Two different columns of one name: the second by its position.
    let e = one("INSERT INTO t SELECT a.x, b.x FROM a JOIN b ON a.k = b.k", Dialect::Ansi);
    assert_eq!(cols(&e), vec![col("t.x", &["a.x"]), col("t._col2", &["b.x"])]);
    // With the target's columns known, by the catalog's column at that position.
    let catalog: HashMap<String, Vec<String>> = [("t".to_string(), vec!["lo".to_string(), "hi".to_string()])].into();
    let got = analyze(
        &["INSERT INTO t SELECT max(a), max(b) FROM s".to_string()],
        Dialect::Ansi,
        &Options::default(),
        &catalog,
    );
    assert_eq!(cols(&got[0]), vec![col("t.lo", &["s.a"]), col("t.hi", &["s.b"])]);
}

#[test]
fn an_alias_that_shadows_a_column_its_own_expression_reads() {
    let e = one(
        "INSERT INTO k SELECT a || businessentityid AS businessentityid, businessentityid AS original FROM person.person",
        Dialect::Ansi,
    );
    assert_eq!(
        cols(&e),
        vec![
            col("k.businessentityid", &["person.person.a", "person.person.businessentityid"]),
            col("k.original", &["person.person.businessentityid"]),
        ]
    );
    // An alias over other columns is still read by a later item (a lateral alias).
    let e = one("INSERT INTO k SELECT a || b AS ab, ab || c AS abc FROM s", Dialect::Snowflake);
    assert!(cols(&e).contains(&col("K.ABC", &["S.A", "S.B", "S.C"])), "{:?}", cols(&e));
}

#[test]
fn identifier_names_its_table_or_says_it_cannot() {
    let e = one("INSERT INTO t SELECT a FROM identifier('db.s.src')", Dialect::Snowflake);
    assert_eq!(e.sources, vec!["DB.S.SRC".to_string()]);
    assert_eq!(cols(&e), vec![col("T.A", &["DB.S.SRC.A"])]);
    for d in [Dialect::SparkSql, Dialect::Snowflake] {
        let e = one("DELETE FROM IDENTIFIER('s.t') WHERE a = 1", d);
        assert_eq!(e.targets.len(), 1, "{d:?}");
        assert!(e.targets[0].eq_ignore_ascii_case("s.t"), "{d:?}: {:?}", e.targets);
        let e = one("UPDATE identifier('s.t') SET a = b", d);
        assert!(e.targets[0].eq_ignore_ascii_case("s.t"), "{d:?}: {:?}", e.targets);
    }
    // A variable: an error, and never a table named '' or `identifier`.
    for (sql, d) in [
        ("SELECT a FROM identifier($tbl)", Dialect::Snowflake),
        ("INSERT INTO t SELECT a FROM identifier(:src)", Dialect::Snowflake),
        ("DELETE FROM identifier(tbl_var) WHERE a = 1", Dialect::SparkSql),
        (
            "MERGE INTO identifier(:t) AS d USING s ON d.k = s.k WHEN MATCHED THEN UPDATE SET d.v = s.v",
            Dialect::Snowflake,
        ),
    ] {
        let got = run(sql, d);
        let e = &got[0];
        assert!(!e.errors.is_empty(), "{sql}: {e:?}");
        let named = |t: &String| t.is_empty() || t.eq_ignore_ascii_case("identifier");
        assert!(!e.targets.iter().chain(&e.sources).any(named), "{sql}: {e:?}");
    }
}

#[test]
fn an_unused_cte_is_no_source_and_a_recursive_cte_is_no_table() {
    let e =
        one("INSERT INTO t WITH c AS (SELECT a FROM s), u AS (SELECT a FROM unused) SELECT a FROM c", Dialect::Ansi);
    assert_eq!(e.sources, vec!["s".to_string()]);
    // A CTE read only by another CTE that is read counts; one read by an unused CTE does not.
    let e = one(
        "WITH a AS (SELECT x FROM s1), b AS (SELECT x FROM a), z AS (SELECT x FROM s2), y AS (SELECT x FROM z) INSERT INTO t SELECT x FROM b",
        Dialect::Postgres,
    );
    assert_eq!(e.sources, vec!["s1".to_string()]);
    assert_eq!(cols(&e), vec![col("t.x", &["s1.x"])]);
    // Recursion without the RECURSIVE keyword (T-SQL, Oracle, Snowflake) and with it.
    for (sql, d) in [
        ("WITH r AS (SELECT id, p FROM s UNION ALL SELECT s.id, s.p FROM s JOIN r ON s.p = r.id) INSERT INTO t SELECT id FROM r", Dialect::TSql),
        ("WITH RECURSIVE r AS (SELECT id, p FROM s UNION ALL SELECT s.id, s.p FROM s JOIN r ON s.p = r.id) INSERT INTO t SELECT id FROM r", Dialect::Postgres),
    ] {
        let e = one(sql, d);
        assert_eq!(e.sources, vec!["s".to_string()], "{sql}");
        assert_eq!(cols(&e), vec![col("t.id", &["s.id"])], "{sql}");
        assert!(e.unresolved.is_empty(), "{sql}: {:?}", e.unresolved);
    }
}

#[test]
fn truncate_and_multi_table_delete_name_their_targets() {
    let e = one("TRUNCATE TABLE a.b", Dialect::Postgres);
    assert_eq!((e.operation.as_str(), e.targets.clone()), ("TRUNCATE", vec!["a.b".to_string()]));
    let e = one("TRUNCATE a.b, c", Dialect::Postgres);
    assert_eq!(e.targets, vec!["a.b".to_string(), "c".to_string()]);
    let e = one("DELETE t1, t2 FROM t1 INNER JOIN t2 ON t1.id = t2.id WHERE t1.x = 1", Dialect::MySql);
    assert_eq!(e.targets, vec!["t1".to_string(), "t2".to_string()]);
    assert!(e.sources.is_empty(), "{:?}", e.sources);
    // Through aliases, and with a third table only read.
    let e = one("DELETE a, b FROM s.t1 a JOIN s.t2 b ON a.id = b.id JOIN s.t3 c ON c.id = a.id", Dialect::MySql);
    assert_eq!((e.targets.clone(), e.sources.clone()), (vec!["s.t1".into(), "s.t2".into()], vec!["s.t3".into()]));
}

#[test]
fn databricks_use_sets_the_right_part_of_the_default() {
    let with_catalog = Options { default_database: Some("main".into()), ..Options::default() };
    let sources = |stmts: &[&str], o: &Options| -> Vec<String> {
        let got = run_all(stmts, Dialect::SparkSql, o);
        assert!(got.iter().all(|e| e.errors.is_empty()), "{stmts:?}: {got:#?}");
        got.last().unwrap().sources.clone()
    };
    // `USE db1` sets the schema: the catalog stays.
    assert_eq!(sources(&["USE db1", "SELECT a FROM t"], &with_catalog), vec!["main.db1.t".to_string()]);
    assert_eq!(sources(&["USE DATABASE db1", "SELECT a FROM t"], &with_catalog), vec!["main.db1.t".to_string()]);
    assert_eq!(sources(&["USE SCHEMA db1", "SELECT a FROM t"], &with_catalog), vec!["main.db1.t".to_string()]);
    assert_eq!(sources(&["USE SCHEMA c2.db1", "SELECT a FROM t"], &with_catalog), vec!["c2.db1.t".to_string()]);
    assert_eq!(
        sources(&["USE CATALOG c1", "USE SCHEMA s1", "SELECT a FROM t"], &Options::default()),
        vec!["c1.s1.t".to_string()]
    );
    assert_eq!(sources(&["USE CATALOG c1", "SELECT a FROM s.t"], &Options::default()), vec!["c1.s.t".to_string()]);
}

#[test]
fn a_compound_column_name_through_an_alias_is_the_tables_column() {
    let e = one("INSERT INTO x SELECT db.t.x AS x FROM db.t AS a", Dialect::Ansi);
    assert_eq!(cols(&e), vec![col("x.x", &["db.t.x"])]);
    let e = one("INSERT INTO x SELECT db.t.x AS x, u.y AS y FROM db.t a JOIN db.u ON a.k = u.k", Dialect::MySql);
    assert_eq!(cols(&e), vec![col("x.x", &["db.t.x"]), col("x.y", &["db.u.y"])]);
}

#[test]
fn invalid_sql_is_an_error_not_partial_lineage() {
    for (sql, d) in [
        ("WITH s (SELECT a FROM t) INSERT INTO u SELECT a FROM s", Dialect::Ansi),
        ("WITH s AS (SELECT a FROM t), v (SELECT a FROM s) INSERT INTO u SELECT a FROM v", Dialect::Postgres),
        ("INSERT INTO tgt SELECT a FROM t1 UNION ALL SELECT b, a FROM t2", Dialect::Ansi),
    ] {
        let got = run(sql, d);
        assert_eq!(got.len(), 1, "{sql}");
        assert!(!got[0].errors.is_empty(), "{sql}: {:?}", got[0]);
        assert!(got[0].targets.is_empty() && got[0].sources.is_empty() && got[0].columns.is_empty(), "{sql}");
    }
    // Spark's grammar makes the `AS` optional.
    let e = one("WITH s (SELECT a FROM t) INSERT INTO u SELECT a FROM s", Dialect::SparkSql);
    assert_eq!((e.targets.clone(), e.sources.clone()), (vec!["u".into()], vec!["t".into()]));
    // Valid forms stay valid.
    for sql in [
        "WITH s (a) AS (SELECT a FROM t) INSERT INTO u SELECT a FROM s",
        "WITH s AS MATERIALIZED (SELECT a FROM t) INSERT INTO u SELECT a FROM s",
        "INSERT INTO u SELECT a FROM t1 UNION SELECT * FROM t2",
    ] {
        let e = one(sql, Dialect::Postgres);
        assert_eq!(e.targets, vec!["u".to_string()], "{sql}");
    }
}

#[test]
fn a_user_defined_table_function_is_reported_not_silently_dropped() {
    let e = one("INSERT INTO t SELECT f.a FROM dbo.fn_orders(5) f", Dialect::TSql);
    assert!(e.unresolved.iter().any(|u| u.contains("dbo.fn_orders")), "{:?}", e.unresolved);
    // Built-in table functions read nothing else.
    let e = one("INSERT INTO t SELECT g.a FROM generate_series(1, 10) g(a)", Dialect::Postgres);
    assert!(e.unresolved.is_empty(), "{:?}", e.unresolved);
}
