//! Unit tests: split_statements, unwrap_procedure, mask_literals, the caps, dialect names, and no
//! panics on random or mutated input.

use super::super::*;

fn texts(v: Vec<(usize, String)>) -> Vec<String> {
    v.into_iter().map(|(_, s)| s).collect()
}

/// Ad-hoc inspection, a tool rather than a test (it asserts nothing):
/// `SQL_DEBUG='select ...' SQL_DIALECT=postgres cargo test --lib sql_debug -- --ignored --nocapture`.
#[test]
#[ignore = "a tool: prints what analyze says about SQL_DEBUG; asserts nothing"]
fn sql_debug() {
    let sql = std::env::var("SQL_DEBUG").expect("SQL_DEBUG: the SQL to analyse");
    let d = Dialect::parse(&std::env::var("SQL_DIALECT").unwrap_or_else(|_| "postgres".into())).unwrap();
    for r in analyze(&[sql], d, &Options::default(), &NoColumns) {
        eprintln!("{r:#?}");
    }
}

#[test]
fn split_on_semicolons_outside_strings_comments_and_dollar_quotes() {
    let s = "SELECT 'a;b' FROM t; -- c;d\nSELECT $$x;y$$; /* e;f */ SELECT \"g;h\" FROM u;;";
    let got = split_statements(s, Dialect::Postgres);
    assert_eq!(texts(got.clone()), vec!["SELECT 'a;b' FROM t", "SELECT $$x;y$$", "SELECT \"g;h\" FROM u"]);
    assert_eq!(got[0].0, 0);
    assert_eq!(&s[got[1].0..got[1].0 + 6], "SELECT");
    // Tagged dollar quotes and nested comments.
    let s = "SELECT $fn$ a; $$ b; $fn$; /* x /* y; */ z; */ SELECT 2";
    assert_eq!(texts(split_statements(s, Dialect::Postgres)), vec!["SELECT $fn$ a; $$ b; $fn$", "SELECT 2"]);
}

#[test]
fn split_tsql_go_batches_and_missing_semicolons() {
    let s = "INSERT INTO a SELECT x FROM b\nGO\nUPDATE c SET y = 1\nSET NOCOUNT ON\nSELECT * FROM a\ngo 2\nPRINT 'GO'";
    assert_eq!(
        texts(split_statements(s, Dialect::TSql)),
        vec!["INSERT INTO a SELECT x FROM b", "UPDATE c SET y = 1", "SET NOCOUNT ON", "SELECT * FROM a", "PRINT 'GO'"]
    );
    // A procedure runs to the end of its batch, semicolons and all.
    let s = "CREATE PROCEDURE p AS BEGIN INSERT INTO a SELECT 1; UPDATE b SET c = 2; END\nGO\nEXEC p";
    assert_eq!(
        texts(split_statements(s, Dialect::TSql)),
        vec!["CREATE PROCEDURE p AS BEGIN INSERT INTO a SELECT 1; UPDATE b SET c = 2; END", "EXEC p"]
    );
    // MERGE's own INSERT/UPDATE/VALUES and a CTE's INSERT are not new statements.
    let s = "WITH s AS (SELECT 1 AS k) MERGE t USING s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = 1 WHEN NOT MATCHED THEN INSERT (k) VALUES (s.k)";
    assert_eq!(split_statements(s, Dialect::TSql).len(), 1);
    let s = "INSERT INTO t (a) SELECT a FROM u UNION ALL SELECT a FROM v";
    assert_eq!(split_statements(s, Dialect::TSql).len(), 1);
}

#[test]
fn split_keywords_at_line_start_outside_tsql() {
    let s = "INSERT INTO a SELECT x FROM b\nINSERT INTO c SELECT y FROM d\nSELECT 1\nUNION ALL\nSELECT 2";
    assert_eq!(
        texts(split_statements(s, Dialect::Postgres)),
        vec!["INSERT INTO a SELECT x FROM b", "INSERT INTO c SELECT y FROM d", "SELECT 1\nUNION ALL\nSELECT 2"]
    );
    // Mid-line keywords never split outside T-SQL.
    let s = "SELECT a FROM t WHERE x IN (SELECT 1) ORDER BY a FOR UPDATE";
    assert_eq!(split_statements(s, Dialect::Postgres).len(), 1);
    let s = "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 2";
    assert_eq!(split_statements(s, Dialect::Postgres).len(), 1);
    let s = "ALTER TABLE t\nDROP COLUMN c";
    assert_eq!(split_statements(s, Dialect::Postgres).len(), 1);
}

#[test]
fn split_mysql_delimiter_and_hash_comments() {
    let s =
        "DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END //\nDELIMITER ;\nSELECT 3; # x;y\nSELECT 4";
    assert_eq!(
        texts(split_statements(s, Dialect::MySql)),
        vec!["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "SELECT 3", "SELECT 4"]
    );
}

#[test]
fn split_keeps_blocks_whole() {
    let s = "CREATE PROCEDURE p() BEGIN INSERT INTO a SELECT 1; IF x THEN DELETE FROM a; END IF; END; SELECT 5";
    assert_eq!(split_statements(s, Dialect::BigQuery).len(), 2);
    let s = "BEGIN\n  INSERT INTO a SELECT 1;\n  UPDATE a SET x = CASE WHEN y THEN 1 END;\nEND;\nSELECT 2;";
    assert_eq!(texts(split_statements(s, Dialect::Snowflake)).last().map(String::as_str), Some("SELECT 2"));
    assert_eq!(split_statements(s, Dialect::Snowflake).len(), 2);
    // A transaction's BEGIN is a statement of its own.
    let s = "BEGIN; INSERT INTO a SELECT 1; COMMIT;";
    assert_eq!(split_statements(s, Dialect::Postgres).len(), 3);
}

#[test]
fn split_empty_and_comment_only() {
    assert!(split_statements("", Dialect::Postgres).is_empty());
    assert!(split_statements(" ; ;\n-- only a comment\n/* and another */", Dialect::Postgres).is_empty());
}

#[test]
fn unwrap_procedure_forms() {
    let (n, b) = unwrap_procedure(
        "CREATE OR REPLACE PROCEDURE etl.p() LANGUAGE plpgsql AS $$ BEGIN INSERT INTO a SELECT 1; END; $$",
    )
    .unwrap();
    assert_eq!((n.as_str(), b.trim()), ("etl.p", "BEGIN INSERT INTO a SELECT 1; END;"));
    let (n, b) = unwrap_procedure("CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1 $body$ LANGUAGE sql").unwrap();
    assert_eq!((n.as_str(), b.trim()), ("f", "SELECT 1"));
    let (n, b) = unwrap_procedure(
        "CREATE PROCEDURE [dbo].[usp_x] @a int = 1, @b varchar(10) AS BEGIN SET NOCOUNT ON; UPDATE t SET c = @a; END",
    )
    .unwrap();
    assert_eq!((n.as_str(), b.as_str()), ("dbo.usp_x", "SET NOCOUNT ON; UPDATE t SET c = @a;"));
    let (n, b) = unwrap_procedure("ALTER PROC dbo.p AS INSERT INTO a SELECT 1").unwrap();
    assert_eq!((n.as_str(), b.as_str()), ("dbo.p", "INSERT INTO a SELECT 1"));
    let (n, b) = unwrap_procedure("CREATE PROCEDURE shop.p() BEGIN DELETE FROM a; END").unwrap();
    assert_eq!((n.as_str(), b.as_str()), ("shop.p", "DELETE FROM a;"));
    let (n, b) = unwrap_procedure("CREATE OR REPLACE PROCEDURE hr.p IS v NUMBER; BEGIN DELETE FROM a; END p;").unwrap();
    assert_eq!(n, "hr.p");
    assert!(b.contains("v NUMBER") && b.contains("DELETE FROM a;") && !b.contains("END"));
    let (n, b) =
        unwrap_procedure("create procedure p() returns string language sql as 'begin insert into a select ''x''; end'")
            .unwrap();
    assert_eq!((n.as_str(), b.as_str()), ("p", "begin insert into a select 'x'; end"));
    let (_, b) = unwrap_procedure("CREATE PROCEDURE p() WITH EXECUTE AS OWNER AS BEGIN SELECT 1; END").unwrap();
    assert_eq!(b, "SELECT 1;");
    assert!(unwrap_procedure("CREATE TABLE p AS SELECT 1").is_none());
    assert!(unwrap_procedure("CREATE VIEW v AS SELECT 1").is_none());
    assert!(unwrap_procedure("SELECT 1").is_none());
    assert!(unwrap_procedure("CREATE PROCEDURE").is_none());
}

#[test]
fn procedure_body_keeps_only_data_moving_statements() {
    let body = "DECLARE x int; BEGIN IF x > 0 THEN INSERT INTO a SELECT 1; ELSIF x < 0 THEN UPDATE a SET b = 1; ELSE NULL; END IF; FOR r IN SELECT * FROM q LOOP DELETE FROM a WHERE id = r.id; END LOOP; EXCEPTION WHEN others THEN RAISE; END;";
    let got = texts(crate::ingest::sql::split::body_statements(body, Dialect::Postgres));
    assert_eq!(
        got,
        vec!["INSERT INTO a SELECT 1", "UPDATE a SET b = 1", "SELECT * FROM q", "DELETE FROM a WHERE id = r.id"]
    );
    let body =
        "SET NOCOUNT ON\nIF @x = 1 INSERT INTO a SELECT 1\nWHILE @i < 3 BEGIN UPDATE a SET b = @i SET @i = @i + 1 END";
    let got = texts(crate::ingest::sql::split::body_statements(body, Dialect::TSql));
    assert_eq!(got, vec!["INSERT INTO a SELECT 1", "UPDATE a SET b = @i"]);
}

#[test]
fn mask_literals_replaces_values_keeps_identifiers() {
    let cases = [
        (Dialect::Postgres, "SELECT * FROM t1 WHERE a = 'x''y' AND b > 10.5e3 AND c = E'\\'' AND d = $tag$z$tag$ AND \"col 1\" = -7 LIMIT 5", "SELECT * FROM t1 WHERE a = ? AND b > ? AND c = ? AND d = ? AND \"col 1\" = -? LIMIT ?"),
        (Dialect::TSql, "SELECT TOP 3 [a b] FROM #t WHERE n = N'name' AND x = 0x1F AND @v = 1", "SELECT TOP ? [a b] FROM #t WHERE n = ? AND x = ? AND @v = ?"),
        (Dialect::MySql, "SELECT `a` FROM t WHERE s = \"str\" AND e = 'it\\'s' -- 'kept comment'", "SELECT `a` FROM t WHERE s = ? AND e = ? -- 'kept comment'"),
        (Dialect::BigQuery, "SELECT r'raw\\' FROM `p.d.t` WHERE x = '''multi\nline''' AND y = b'bytes'", "SELECT ? FROM `p.d.t` WHERE x = ? AND y = ?"),
        (Dialect::Oracle, "SELECT q'[it's]' FROM dual WHERE d = DATE '2024-01-01'", "SELECT ? FROM dual WHERE d = DATE ?"),
        (Dialect::Postgres, "SELECT col2, t.c3, $1 FROM s.t3 WHERE x = 'unterminated", "SELECT col2, t.c3, $1 FROM s.t3 WHERE x = ?"),
    ];
    for (d, input, want) in cases {
        assert_eq!(mask_literals(input, d), want, "{input}");
    }
    let r = analyze(
        &["INSERT INTO a SELECT 'secret@example.com', 42 FROM b".into()],
        Dialect::Postgres,
        &Options::default(),
        &NoColumns,
    );
    assert_eq!(r[0].masked_sql, "INSERT INTO a SELECT ?, ? FROM b");
}

#[test]
fn size_cap_refuses_without_parsing() {
    let opts = Options { max_statement_bytes: 100, ..Options::default() };
    let big = format!("SELECT {} FROM t", "a, ".repeat(50) + "a");
    let r = analyze(&[big, "SELECT a FROM t".into()], Dialect::Postgres, &opts, &NoColumns);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].operation, "UNKNOWN");
    assert!(r[0].errors[0].contains("over the limit of 100 bytes"), "{:?}", r[0].errors);
    assert!(r[1].errors.is_empty());
    assert_eq!(r[1].sources, vec!["t"]);
}

#[test]
fn nesting_cap_refuses_without_parsing() {
    let opts = Options { max_nesting: 10, ..Options::default() };
    let deep = format!("SELECT {}1{} FROM t", "(".repeat(11), ")".repeat(11));
    let ok = format!("SELECT {}1{} FROM t", "(".repeat(10), ")".repeat(10));
    let in_string = format!("SELECT '{}' FROM t", "(".repeat(50));
    let r = analyze(&[deep, ok, in_string], Dialect::Postgres, &opts, &NoColumns);
    assert!(r[0].errors[0].contains("nested deeper than 10"), "{:?}", r[0].errors);
    assert!(r[1].errors.is_empty(), "{:?}", r[1].errors);
    assert!(r[2].errors.is_empty(), "{:?}", r[2].errors);
    // The default cap: 200 nested subqueries parse and analyse; 201 are refused.
    let nested = |n: usize| format!("INSERT INTO o SELECT a FROM {}t{}", "(SELECT a FROM ".repeat(n), ") x".repeat(n));
    let r = analyze(&[nested(200), nested(201)], Dialect::Postgres, &Options::default(), &NoColumns);
    assert!(r[0].errors.is_empty(), "{:?}", r[0].errors);
    assert_eq!(r[0].columns[0].sources, vec!["t.a"]);
    assert!(r[1].errors[0].contains("nested deeper than 200"));
}

#[test]
fn long_operator_runs_are_capped_not_a_stack_overflow() {
    // 1 MiB holds a run of over 100,000 `+`: parsing it would build a tree that deep. Refused.
    let chain = |n: usize| (0..n).map(|i| format!("c{i}")).collect::<Vec<_>>().join("+");
    let over = format!("INSERT INTO o SELECT {} AS total FROM t", chain(100_000));
    let under = format!("INSERT INTO o SELECT {} AS total FROM t", chain(MAX_OPERATOR_RUN - 1));
    let or_list = format!("DELETE FROM t WHERE {}", vec!["x = 1"; 5000].join(" OR "));
    let commas = format!("INSERT INTO t VALUES {}", vec!["(1, 'a' || 'b')"; 20_000].join(", "));
    let r = analyze(&[over, under, or_list, commas], Dialect::Postgres, &Options::default(), &NoColumns);
    assert!(r[0].errors[0].contains("operators in one expression"), "{:?}", r[0].errors);
    assert!(r[1].errors.is_empty(), "{:?}", r[1].errors);
    assert_eq!(r[1].columns[0].sources.len(), MAX_OPERATOR_RUN - 1);
    assert!(r[2].errors.is_empty(), "{:?}", r[2].errors);
    assert!(r[3].errors.is_empty(), "{:?}", r[3].errors);
}

#[test]
fn dialect_names_and_datastore_types() {
    assert_eq!(Dialect::parse("PostgreSQL"), Some(Dialect::Postgres));
    assert_eq!(Dialect::parse("mssql"), Some(Dialect::TSql));
    assert_eq!(Dialect::parse("SQLSERVER"), Some(Dialect::TSql));
    assert_eq!(Dialect::parse("databricks"), Some(Dialect::SparkSql));
    assert_eq!(Dialect::parse("spark"), Some(Dialect::SparkSql));
    assert_eq!(Dialect::parse("presto"), Some(Dialect::Trino));
    assert_eq!(Dialect::parse("generic"), Some(Dialect::Ansi));
    assert_eq!(Dialect::parse("mariadb"), Some(Dialect::MariaDb));
    assert_eq!(Dialect::parse("cobol"), None);
    assert_eq!(Dialect::for_datastore_type("Azure SQL"), Some(Dialect::TSql));
    assert_eq!(Dialect::for_datastore_type("postgresql"), Some(Dialect::Postgres));
    assert_eq!(Dialect::for_datastore_type("snowflake"), Some(Dialect::Snowflake));
    assert_eq!(Dialect::for_datastore_type("athena"), Some(Dialect::Trino));
    assert_eq!(Dialect::for_datastore_type("mongodb"), None);
    assert!(Dialect::Snowflake.folds_upper() && Dialect::Oracle.folds_upper());
    assert!(!Dialect::Postgres.folds_upper() && !Dialect::BigQuery.folds_upper());
}

#[test]
fn every_input_index_has_an_entry_in_order() {
    let stmts: Vec<String> = vec![
        "".into(),
        "INSERT INTO a SELECT 1; INSERT INTO b SELECT 2".into(),
        "CREATE PROCEDURE p() LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'x'; END $$".into(),
        "IF 1 = 1 THEN".into(),
        "garbage (".into(),
    ];
    let r = analyze(&stmts, Dialect::Postgres, &Options::default(), &NoColumns);
    let idx: Vec<usize> = r.iter().map(|s| s.index).collect();
    assert_eq!(idx, vec![0, 1, 1, 2, 3, 4]);
    assert_eq!(r[0].operation, "EMPTY");
    assert_eq!(r[1].targets, vec!["a"]);
    assert_eq!(r[2].targets, vec!["b"]);
    assert_eq!((r[3].operation.as_str(), r[3].procedure.as_deref()), ("CREATE_PROCEDURE", Some("p")));
    assert_eq!(r[5].operation, "UNKNOWN");
}

/// A tiny deterministic generator (xorshift), so the fuzz cases are the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const DIALECTS: [Dialect; 12] = [
    Dialect::Postgres,
    Dialect::Redshift,
    Dialect::MySql,
    Dialect::MariaDb,
    Dialect::Snowflake,
    Dialect::BigQuery,
    Dialect::TSql,
    Dialect::SparkSql,
    Dialect::Hive,
    Dialect::Oracle,
    Dialect::Trino,
    Dialect::Ansi,
];

/// Statements that are rewritten or cut before parsing, or analysed through a literal.
const REWRITTEN: &str = "ALTER TABLE a APPEND FROM b IGNOREEXTRA; CREATE TABLE t (LIKE s INCLUDING ALL); \
    ALTER TABLE a SWAP WITH b; CREATE TABLE c COPY d; CREATE TABLE e SHALLOW CLONE f VERSION AS OF 3; \
    MERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE OUTPUT deleted.* INTO a (x); \
    SELECT a FROM s FOR TIMESTAMP AS OF TIMESTAMP '2024-01-01' x INNER HASH JOIN u ON 1 = 1 OPTION (MAXDOP 1); \
    EXECUTE IMMEDIATE 'INSERT INTO t SELECT ''a'' FROM s'; EXEC sp_executesql N'DELETE FROM t'; \
    CREATE OR REPLACE FORCE EDITIONABLE MATERIALIZED VIEW v BACKUP NO AUTO REFRESH YES AS SELECT 1 WITH NO DATA; \
    INSERT OVERWRITE LOCAL DIRECTORY USING csv OPTIONS (path '/x') SELECT 1; INSERT INTO t REPLACE WHERE x SELECT 1; \
    CACHE TABLE c AS SELECT * FROM delta.`/p`; CREATE TEMP VIEW v USING csv OPTIONS (path 'p'); \
    INSERT INTO t (a) SELECT a FROM s ON CONFLICT (a) DO UPDATE SET b = EXCLUDED.a; SELECT * ILIKE '%a_' FROM s; \
    CREATE TABLE x (a, b) AS SELECT 1, 2; UPDATE t, s SET t.a = s.a; BULK INSERT t FROM 'f' WITH (X = 1); \
    COPY INTO delta.`/p` FROM (SELECT a FROM '/q'); CREATE STREAM st ON TABLE s; CREATE TASK k AS INSERT INTO t SELECT 1; \
    CREATE RECURSIVE VIEW v (n) AS SELECT 1; CREATE TRIGGER g AFTER INSERT ON t FOR EACH ROW INSERT INTO a VALUES (NEW.x); \
    CREATE PACKAGE BODY p AS PROCEDURE q IS BEGIN DELETE FROM t; END q; END p;\n/\n";

#[test]
fn no_panic_on_prefixes_of_rewritten_statements() {
    let opts = Options::default();
    for d in DIALECTS {
        for cut in (0..=REWRITTEN.len()).step_by(7) {
            if REWRITTEN.is_char_boundary(cut) {
                let s = REWRITTEN[..cut].to_string();
                assert!(!analyze(&[s], d, &opts, &NoColumns).is_empty());
            }
        }
    }
}

#[test]
fn no_panic_on_mutated_and_random_input() {
    let seeds = [
        "WITH a AS (SELECT x, y FROM s.t) INSERT INTO o (p, q) SELECT x, SUM(y) OVER (PARTITION BY x) FROM a",
        "MERGE INTO t USING (SELECT * FROM s) u ON t.id = u.id WHEN MATCHED THEN UPDATE SET v = u.v WHEN NOT MATCHED THEN INSERT (id) VALUES (u.id)",
        "CREATE PROCEDURE p AS BEGIN SELECT a INTO #t FROM b; UPDATE x SET y = z FROM #t; END",
        "SELECT 'str', \"q\", `b`, [c], $$d$$, q'[e]', 1.5e3, /* c */ -- d\n x FROM t LATERAL VIEW explode(a) v AS e",
        "DELIMITER //\nCREATE PROCEDURE p() BEGIN INSERT INTO a SELECT 1; END //",
        "UPDATE t SET (a, b) = (SELECT c, d FROM u) WHERE EXISTS (SELECT 1 FROM w)",
        "SELECT f.value FROM t, LATERAL FLATTEN(input => t.v) f, UNNEST(t.arr) AS g(h) CROSS APPLY (SELECT 1) z",
        REWRITTEN,
    ];
    let alphabet: Vec<&str> = vec![
        "(", ")", "'", "\"", "`", "[", "]", "$$", "$", ";", "--", "/*", "*/", "#", "@", ",", ".", " ", "\n", "SELECT",
        "FROM", "WITH", "AS", "BEGIN", "END", "CASE", "WHEN", "GO", "INTO", "é", "\u{0}", "\\", "*", "::", ":", "q'[",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let opts = Options::default();
    for round in 0..600 {
        let mut s: String = seeds[rng.below(seeds.len())].to_string();
        for _ in 0..rng.below(8) + 1 {
            let mut pos = rng.below(s.len() + 1);
            while !s.is_char_boundary(pos) {
                pos -= 1;
            }
            match rng.below(3) {
                0 => s.insert_str(pos, alphabet[rng.below(alphabet.len())]),
                1 => {
                    let mut end = (pos + rng.below(6)).min(s.len());
                    while !s.is_char_boundary(end) {
                        end -= 1;
                    }
                    s.replace_range(pos..end, "");
                }
                _ => {
                    let cut = s[pos..].to_string();
                    s.truncate(pos);
                    s.push_str(&cut.chars().rev().collect::<String>());
                }
            }
        }
        if round % 5 == 0 {
            s = (0..rng.below(80)).map(|_| alphabet[rng.below(alphabet.len())]).collect::<Vec<_>>().join(" ");
        }
        let d = DIALECTS[round % DIALECTS.len()];
        let _ = split_statements(&s, d);
        let _ = mask_literals(&s, d);
        let _ = unwrap_procedure(&s);
        let r = analyze(std::slice::from_ref(&s), d, &opts, &NoColumns);
        assert!(!r.is_empty(), "{s:?}");
    }
}

#[test]
fn deep_case_nesting_without_parentheses_is_refused_by_the_parser() {
    let case = |n: usize| format!("SELECT {}1{} FROM t", "CASE WHEN a THEN ".repeat(n), " END".repeat(n));
    let r = analyze(&[case(100), case(5_000)], Dialect::Postgres, &Options::default(), &NoColumns);
    assert!(r[0].errors.is_empty(), "{:?}", r[0].errors);
    assert_eq!(r[1].operation, "UNKNOWN");
}
