//! OpenLineage's dataset naming (spec/Naming.md), in one place: every path that touches a
//! dataset's identity (resolution, auto-creation, column-lineage input fields, lifecycle DROP and
//! RENAME, metadata, external ends) reads namespaces and names through here.
//!
//! A dataset is `namespace` (`scheme:[//authority]`, the datasource) plus `name` (the path in
//! it). By platform:
//!
//! | platform | namespace | name |
//! | --- | --- | --- |
//! | Postgres, Redshift, Snowflake, Trino, Athena, Oracle | `postgres://host:port`, ... | `database.schema.table` |
//! | BigQuery | `bigquery` (or `bigquery://`) | `project.dataset.table` |
//! | MySQL, Hive, Teradata, Cassandra | `mysql://host:port`, ... | `database.table` |
//! | SQL Server / Synapse | `sqlserver://host:port` | `schema.table` (or `database.schema.table`) |
//! | AWS Glue | `arn:aws:glue:region:account` | `table/database/table` |
//! | S3, GCS, HDFS, ABFSS, WASBS, DBFS, local and remote files | `s3://bucket`, `gs://bucket`, `hdfs://host:port`, `file`, ... | a path or object key |
//! | Kafka | `kafka://host:port` | the topic |
//!
//! A `symlinks` identifier of type `TABLE` names a table (`database.table` or
//! `catalog.database.table`) whatever its namespace's scheme: Spark names a Hive table by its
//! metastore URI or by its warehouse location (`file:/tmp/warehouse`). Table names split into
//! database, schema and table at dots: two parts are `schema.table` (a MySQL or Hive database is
//! the schema level of the catalog), three `database.schema.table`, more keep the rest in the
//! table name.

/// How a dataset's name is organised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// `[database.]schema.table` in a warehouse or catalog.
    Table,
    /// A path or object key in a file system or blob store.
    Path,
    /// A Kafka (or other streaming) topic.
    Topic,
}

/// A dataset's identity read by the naming conventions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetName {
    /// The namespace with the spellings of one scheme folded together ([`normalize_namespace`]).
    pub namespace: String,
    /// The namespace's scheme, folded (`postgres`, `s3`, `gs`, `file`, `bigquery`, ...).
    pub scheme: String,
    pub kind: NameKind,
    pub database: Option<String>,
    pub schema: Option<String>,
    /// The table, path or topic.
    pub name: String,
}

/// Why a name cannot be read as a dataset of its platform (seed 002's reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// Nothing to name a dataset by (an empty name, a Kafka namespace without a topic).
    Unparsable,
    /// A table name without the schema level it belongs under (a bare `orders`).
    NoSchema,
}

const PATH_SCHEMES: [&str; 12] =
    ["s3", "gs", "hdfs", "abfss", "abfs", "wasbs", "wasb", "file", "dbfs", "adl", "oss", "viewfs"];
const TOPIC_SCHEMES: [&str; 3] = ["kafka", "pulsar", "kinesis"];

/// The namespace as written, with the spellings of one scheme folded together: lower case, no
/// trailing slash, `postgresql://` as `postgres://`, `s3a://`/`s3n://` as `s3://`, `gcs://` as
/// `gs://`, `bigquery://` as `bigquery`, `file://` (no host) as `file`.
pub fn normalize_namespace(ns: &str) -> String {
    let ns = ns.trim().trim_end_matches('/').to_lowercase();
    for (alias, canonical) in [
        ("postgresql://", "postgres://"),
        ("s3a://", "s3://"),
        ("s3n://", "s3://"),
        ("gcs://", "gs://"),
        ("abfs://", "abfss://"),
        ("wasb://", "wasbs://"),
    ] {
        if let Some(rest) = ns.strip_prefix(alias) {
            return format!("{canonical}{rest}");
        }
    }
    match ns.as_str() {
        "bigquery:" | "bigquery:/" => "bigquery".into(),
        "file:" | "file:/" => "file".into(),
        _ => ns,
    }
}

/// The folded scheme of a namespace: what comes before `://` or `:`, the whole namespace when it
/// has neither (`bigquery`, `file`).
pub fn scheme(namespace: &str) -> String {
    let ns = normalize_namespace(namespace);
    let end = ns.find(':').unwrap_or(ns.len());
    ns[..end].to_string()
}

/// Whether the namespace is a file system or blob store (names are paths).
pub fn is_path_namespace(namespace: &str) -> bool {
    PATH_SCHEMES.contains(&scheme(namespace).as_str())
}

/// The datastore `type` a namespace's scheme stands for, for a datastore created for it.
pub fn datastore_type(namespace: &str) -> String {
    let s = scheme(namespace);
    match s.as_str() {
        "postgres" => "postgresql".into(),
        "gs" => "gcs".into(),
        "awsathena" => "athena".into(),
        "arn" => "glue".into(),
        "" => "openlineage".into(),
        _ => s,
    }
}

/// The name an asset that is not in the catalog keeps: its OpenLineage identity as one string.
pub fn external_fqn(namespace: &str, name: &str) -> String {
    if namespace.ends_with('/') || name.starts_with('/') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

/// Reads `name` in `namespace` by the platform's convention. `symlink_type` is the `type` of a
/// `symlinks` identifier: `TABLE` names a table whatever the namespace.
pub fn parse(namespace: &str, name: &str, symlink_type: Option<&str>) -> Result<DatasetName, NameError> {
    let ns = normalize_namespace(namespace);
    let scheme = scheme(&ns);
    let name = name.trim();
    let table_link = symlink_type.is_some_and(|t| t.eq_ignore_ascii_case("TABLE"));
    let kind = if table_link {
        NameKind::Table
    } else if PATH_SCHEMES.contains(&scheme.as_str()) {
        NameKind::Path
    } else if TOPIC_SCHEMES.contains(&scheme.as_str()) {
        NameKind::Topic
    } else if scheme == "arn" || scheme == "azurekusto" || scheme == "azurecosmos" {
        NameKind::Table
    } else if name.starts_with('/') || (name.contains('/') && !name.contains('.')) {
        // An unknown platform naming its datasets by path.
        NameKind::Path
    } else {
        NameKind::Table
    };
    let out = |database: Option<&str>, schema: Option<&str>, table: &str| DatasetName {
        namespace: ns.clone(),
        scheme: scheme.clone(),
        kind,
        database: database.map(str::to_string),
        schema: schema.map(str::to_string),
        name: table.to_string(),
    };
    match kind {
        NameKind::Path | NameKind::Topic => {
            if name.trim_matches('/').is_empty() {
                return Err(NameError::Unparsable);
            }
            Ok(out(None, None, name))
        }
        NameKind::Table => {
            // Glue: table/{database}/{table}; Kusto: {database}/{table}; Cosmos: colls/{table}.
            let name = name.strip_prefix("table/").or_else(|| name.strip_prefix("colls/")).unwrap_or(name);
            let sep = if scheme == "arn" || scheme == "azurekusto" { '/' } else { '.' };
            let parts: Vec<&str> = name.split(sep).map(str::trim).collect();
            if parts.iter().all(|p| p.is_empty()) {
                return Err(NameError::Unparsable);
            }
            if parts.iter().any(|p| p.is_empty()) {
                return Err(NameError::Unparsable);
            }
            match parts.as_slice() {
                [_] => Err(NameError::NoSchema),
                [schema, table] => Ok(out(None, Some(schema), table)),
                [db, schema, rest @ ..] => Ok(out(Some(db), Some(schema), &rest.join(&sep.to_string()))),
                [] => Err(NameError::Unparsable),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(ns: &str, name: &str) -> (NameKind, Option<String>, Option<String>, String) {
        let d = parse(ns, name, None).expect("parses");
        (d.kind, d.database, d.schema, d.name)
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn warehouses_split_database_schema_table() {
        for ns in [
            "postgres://db:5432",
            "postgresql://db:5432",
            "redshift://cluster.us-east-1:5439",
            "snowflake://org-acct",
            "trino://host:8080",
            "awsathena://athena.us-east-1.amazonaws.com",
            "bigquery",
        ] {
            assert_eq!(parts(ns, "a.b.c"), (NameKind::Table, s("a"), s("b"), "c".into()), "{ns}");
        }
        assert_eq!(parts("mysql://db:3306", "shop.orders"), (NameKind::Table, None, s("shop"), "orders".into()));
        assert_eq!(parts("hive://metastore:9083", "default.t"), (NameKind::Table, None, s("default"), "t".into()));
        assert_eq!(parts("arn:aws:glue:us-east-1:123", "table/db/t"), (NameKind::Table, None, s("db"), "t".into()));
        assert_eq!(parse("postgres://db:5432", "orders", None), Err(NameError::NoSchema));
        assert_eq!(parse("postgres://db:5432", " ", None), Err(NameError::Unparsable));
        assert_eq!(parse("postgres://db:5432", "a..b", None), Err(NameError::Unparsable));
    }

    #[test]
    fn stores_name_paths_and_topics() {
        for ns in [
            "s3://bucket",
            "s3a://bucket",
            "gs://bucket",
            "hdfs://nn:8020",
            "abfss://c@svc.dfs.core.windows.net",
            "file",
            "file://host",
        ] {
            assert_eq!(parts(ns, "raw/orders.csv").0, NameKind::Path, "{ns}");
        }
        assert_eq!(parts("gs://bucket", "copied.csv"), (NameKind::Path, None, None, "copied.csv".into()));
        assert_eq!(parts("kafka://broker:9092", "orders.v1"), (NameKind::Topic, None, None, "orders.v1".into()));
        assert_eq!(parse("kafka://broker:9092", "", None), Err(NameError::Unparsable));
        assert_eq!(parse("s3://bucket", "/", None), Err(NameError::Unparsable));
    }

    #[test]
    fn table_symlinks_name_tables_whatever_the_scheme() {
        let d = parse("file:/tmp/cll_test", "default.cll_source1", Some("TABLE")).unwrap();
        assert_eq!((d.kind, d.schema.as_deref(), d.name.as_str()), (NameKind::Table, Some("default"), "cll_source1"));
        let d = parse("hdfs://nn:8020", "spark_catalog.db.t", Some("table")).unwrap();
        assert_eq!(
            (d.database.as_deref(), d.schema.as_deref(), d.name.as_str()),
            (Some("spark_catalog"), Some("db"), "t")
        );
        assert_eq!(parse("hdfs://nn:8020", "/warehouse/db.db/t", Some("LOCATION")).unwrap().kind, NameKind::Path);
    }

    #[test]
    fn namespaces_fold_scheme_spellings() {
        assert_eq!(normalize_namespace("postgresql://Warehouse:5432/"), "postgres://warehouse:5432");
        assert_eq!(normalize_namespace("s3a://bucket"), "s3://bucket");
        assert_eq!(normalize_namespace("gcs://bucket"), "gs://bucket");
        assert_eq!(normalize_namespace("bigquery://"), "bigquery");
        assert_eq!(normalize_namespace("file:///"), "file");
        assert_eq!(scheme("file:/tmp/x"), "file");
        assert_eq!(scheme("bigquery"), "bigquery");
        assert_eq!(datastore_type("postgres://h:1"), "postgresql");
        assert_eq!(datastore_type("gs://b"), "gcs");
        assert!(is_path_namespace("hdfs://nn:8020"));
        assert!(!is_path_namespace("kafka://b:9092"));
    }

    #[test]
    fn external_names_join_namespace_and_name() {
        assert_eq!(external_fqn("s3://bucket", "raw/orders"), "s3://bucket/raw/orders");
        assert_eq!(external_fqn("file:///", "tmp/x"), "file:///tmp/x");
        assert_eq!(external_fqn("file", "/tmp/x"), "file/tmp/x");
    }
}
