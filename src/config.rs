//! One typed configuration: clap flags with env fallbacks, validated at start.
//!
//! # How it fits
//!
//! `Cli` and its `Command`s (`serve`, `schema`, `export`, `import`, `replay`, `token create|list|revoke`) are clap
//! derives with env fallbacks; the doc comments become `--help`. `StoreArgs::kind()` decides the store once and returns
//! `StoreKind::{Embedded, Neo4j}`; `AuthMode::{On, Off}` is an enum too. Neither is a boolean.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "tributary",
    version,
    about = "A data-lineage service: lineage from OpenLineage, SQL and people, served over GraphQL"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// `serve`'s flags (the Kafka ones among them) make its variant large; the enum is parsed once
// at start and never moved around, so boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve GraphQL (POST /graphql, GraphiQL at GET /graphql), health, readiness and metrics.
    Serve(ServeArgs),
    /// Print the GraphQL SDL (the content of schema.graphql).
    Schema,
    /// Write the whole store as JSON lines (to stdout, or --output).
    Export {
        #[command(flatten)]
        store: StoreArgs,
        /// File to write; stdout when absent.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Re-apply stored OpenLineage events, oldest first (for example after registering the
    /// datastores their datasets belong to). Safe to run twice: applying an event again
    /// changes nothing.
    Replay {
        #[command(flatten)]
        store: StoreArgs,
        /// Only events with a larger id.
        #[arg(long, default_value_t = 0)]
        after_id: i64,
        /// Only events whose last outcome is one of these (applied, recorded, ignored, rejected, failed).
        #[arg(long, value_delimiter = ',')]
        status: Vec<String>,
    },
    /// Record the lineage of a query log (CSV with a `query_text` column and optional
    /// `database_name`, `schema_name`, `user_name`, `start_time`), in `start_time` order, with a
    /// progress bar; running it twice changes nothing the second time. With `--kind views` or
    /// `--kind procedures`, the CSV holds view or procedure definitions instead (see --kind).
    ImportQueryLog {
        #[command(flatten)]
        store: StoreArgs,
        /// The CSV file.
        file: PathBuf,
        /// The datastore (by name) whose lineage the statements are.
        #[arg(long)]
        datastore: String,
        /// The SQL dialect; by default the one of the datastore's type (snowflake, postgres, ...).
        #[arg(long)]
        dialect: Option<String>,
        /// Statements per chunk (at most 1000); chunks are parsed in parallel and recorded in
        /// order, each in one transaction on the embedded store.
        #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u16).range(1..=1000))]
        chunk: u16,
        /// What the rows hold. `queries`: executed statements (`query_text`), applied in
        /// `start_time` order. `views`: view definitions (`view_definition` or `query_text`),
        /// with the view's name in `table_name`/`view_name`/`object_name` (and `table_schema`,
        /// `table_catalog` accepted for the defaults); a bare SELECT becomes `CREATE VIEW name AS
        /// ...`. `procedures`: stored code (`procedure_definition` or `query_text`), whole
        /// `CREATE PROCEDURE` statements or bodies named by `procedure_name`/`object_name`.
        /// Definitions apply in file order.
        #[arg(long, value_enum, default_value = "queries", ignore_case = true)]
        kind: LogKind,
        /// Also send each recorded statement to this OpenLineage endpoint as a COMPLETE RunEvent
        /// (as `serve --emit-openlineage-url` does); the command waits until they are sent.
        #[arg(long, env = "TRIBUTARY_EMIT_OPENLINEAGE_URL")]
        emit_openlineage_url: Option<String>,
    },
    /// What SQL means, as `analyzeSql` answers it, without a store: reads JSON lines on stdin
    /// (`{"sql": "..."}` or `{"statements": [...]}`, optional `default_database`,
    /// `default_schema` and `catalog` `{table: [columns]}`) and prints one JSON array of statement
    /// lineages per line; the analysis rate goes to stderr at the end.
    AnalyzeSql {
        /// The SQL dialect (postgres, redshift, mysql, mariadb, snowflake, bigquery, tsql,
        /// sparksql, hive, oracle, trino, ansi); a line's own `dialect` overrides it.
        #[arg(long)]
        dialect: String,
    },
    /// Manage API tokens: create (or update) a user with a new token, list, revoke.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Copy the embedded store to a new file, consistently, while `serve` runs on it (SQLite's
    /// online backup). Restore by putting the file in an empty directory as `tributary.db`.
    /// For Neo4j, use Neo4j's own tools or `tributary export`.
    Backup {
        #[command(flatten)]
        store: StoreArgs,
        /// The file to write; it must not exist yet.
        #[arg(long)]
        to: PathBuf,
    },
    /// Load a JSON-lines export into an empty store.
    Import {
        #[command(flatten)]
        store: StoreArgs,
        /// The export file to load.
        file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Create or update the user and print a new token as the last line (shown once).
    Create {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        user: String,
        /// ADMIN, MANAGER or MEMBER.
        #[arg(long, default_value = "MEMBER")]
        role: String,
        /// With ADMIN: an admin restricted to this team's permissions.
        #[arg(long)]
        team: Option<String>,
    },
    /// Revoke every token of a user at once.
    Revoke {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        user: String,
    },
    /// List tokens (their first characters, never the secret) with users, roles and use.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// What the rows of an `import-query-log` file hold: the ingest's own type, no twin.
pub use crate::ingest::sql::query_log::LogKind;

/// Whether requests must carry a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthMode {
    On,
    /// A local trial only: every request acts as an unrestricted admin.
    Off,
}

#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Directory of the embedded store (used when no Neo4j URI is given).
    #[arg(long, env = "TRIBUTARY_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// A Neo4j URI (bolt://host:7687): makes Neo4j the store.
    #[arg(long, env = "NEO4J_URI")]
    pub neo4j_uri: Option<String>,
    #[arg(long, env = "NEO4J_USER", default_value = "neo4j")]
    pub neo4j_user: String,
    #[arg(long, env = "NEO4J_PASSWORD", default_value = "", hide_env_values = true)]
    pub neo4j_password: String,
    /// The Neo4j database; the server's default when absent.
    #[arg(long, env = "NEO4J_DATABASE")]
    pub neo4j_database: Option<String>,
}

/// Which store to use, decided once from the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreKind {
    Embedded { data_dir: PathBuf },
    Neo4j { uri: String, user: String, password: String, database: Option<String> },
}

impl StoreArgs {
    pub fn kind(&self) -> StoreKind {
        match self.neo4j_uri.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
            Some(uri) => StoreKind::Neo4j {
                uri: uri.to_string(),
                user: self.neo4j_user.clone(),
                password: self.neo4j_password.clone(),
                database: self.neo4j_database.clone().filter(|d| !d.is_empty()),
            },
            None => StoreKind::Embedded { data_dir: self.data_dir.clone() },
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "TRIBUTARY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Origins allowed by CORS (repeat, or comma-separated; `*` for any). None: no CORS headers.
    #[arg(long, env = "TRIBUTARY_CORS_ORIGIN", value_delimiter = ',')]
    pub cors_origin: Vec<String>,
    /// Also send every accepted OpenLineage event to this OpenLineage endpoint (for example
    /// http://marquez:5000/api/v1/lineage), without slowing or failing ingest.
    #[arg(long, env = "TRIBUTARY_EMIT_OPENLINEAGE_URL")]
    pub emit_openlineage_url: Option<String>,
    /// Create a container (with the `schema` facet's fields) for an OpenLineage dataset whose
    /// namespace a datastore lists but whose table is not catalogued (otherwise such a dataset
    /// stays an external end, reported as unresolved).
    #[arg(long, env = "TRIBUTARY_OPENLINEAGE_AUTO_CREATE")]
    pub openlineage_auto_create: bool,
    /// Zero-setup mode, for a first look: an OpenLineage namespace no datastore lists gets a
    /// datastore of its own (named after the namespace, its type from the scheme), and every
    /// dataset becomes a container (its fields from the schema facet or the column lineage), so
    /// the first events a producer sends draw a graph. Datastores are created only for
    /// unrestricted admins (and with TRIBUTARY_AUTH=off). Implies --openlineage-auto-create.
    #[arg(long, env = "TRIBUTARY_OPENLINEAGE_ZERO_SETUP")]
    pub openlineage_zero_setup: bool,
    /// `off` only for a local trial: every request then acts as an unrestricted admin.
    #[arg(long, env = "TRIBUTARY_AUTH", value_enum, default_value = "on", ignore_case = true)]
    pub auth: AuthMode,
    /// Days stored OpenLineage events are kept; 0 keeps them forever.
    #[arg(long, env = "TRIBUTARY_EVENT_RETENTION_DAYS", default_value_t = 90)]
    pub event_retention_days: u32,
    /// Seconds to keep trying to reach Neo4j at start (each attempt is logged) before giving
    /// up; 0 tries once.
    #[arg(long, env = "TRIBUTARY_STORE_WAIT_SECS", default_value_t = 120)]
    pub store_wait_secs: u64,
    /// Seconds the requests in flight get to finish after SIGTERM or Ctrl-C before `serve`
    /// exits without them.
    #[arg(long, env = "TRIBUTARY_SHUTDOWN_GRACE_SECS", default_value_t = 30)]
    pub shutdown_grace_secs: u64,
    #[command(flatten)]
    pub pushback: PushBackArgs,
    /// OpenLineage from Kafka (README, "Sending OpenLineage events"); off without brokers.
    #[command(flatten, next_help_heading = "Kafka intake")]
    pub kafka: crate::kafka::KafkaArgs,
}

/// Push-back limits (README, "Load and push-back").
#[derive(Debug, Clone, Args)]
pub struct PushBackArgs {
    /// Ingest requests (the REST ingest routes and `ingestOpenLineage`) that run at once.
    #[arg(long, env = "TRIBUTARY_INGEST_CONCURRENCY", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub ingest_concurrency: u32,
    /// Ingest requests that may wait for a running one to finish; past them, 503 at once.
    #[arg(long, env = "TRIBUTARY_INGEST_QUEUE", default_value_t = 32,
          value_parser = clap::value_parser!(u32).range(0..=65536))]
    pub ingest_queue: u32,
    /// How long (milliseconds) a waiting ingest request waits before it is answered 503.
    #[arg(long, env = "TRIBUTARY_INGEST_QUEUE_WAIT_MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub ingest_queue_wait_ms: u64,
    /// Failed authentications a client address may make per minute (as a burst, then
    /// steadily); past them it is answered 429 until it may try again. 0: no throttle.
    #[arg(long, env = "TRIBUTARY_AUTH_FAILURES_PER_MINUTE", default_value_t = 20)]
    pub auth_failures_per_minute: u32,
    /// OpenLineage requests smaller than this many events are grouped with the requests that
    /// arrive beside them and written together, up to this many events a group (group commit);
    /// each is still answered with its own events' reports once they are applied. 0: no grouping.
    #[arg(long, env = "TRIBUTARY_INGEST_GROUP_EVENTS", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub ingest_group_events: u32,
    /// How long (milliseconds) the group commit waits at most for the requests it expects to
    /// join a group (as many as joined the last one; a lone client waits for none).
    #[arg(long, env = "TRIBUTARY_INGEST_GROUP_WAIT_MS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub ingest_group_wait_ms: u64,
    /// On Neo4j, how long (milliseconds) the events of one ingest session may take before it
    /// takes no more (up to 1,000 events a session); its writes and commit follow, holding their
    /// locks until then, so other writers wait about that long plus the commit behind it.
    #[arg(long, env = "TRIBUTARY_INGEST_SESSION_MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub ingest_session_ms: u64,
}

impl PushBackArgs {
    pub fn limits(&self) -> crate::api::pushback::Limits {
        crate::api::pushback::Limits {
            ingest_concurrency: self.ingest_concurrency as usize,
            ingest_queue: self.ingest_queue as usize,
            ingest_queue_wait: std::time::Duration::from_millis(self.ingest_queue_wait_ms),
            auth_failures_per_minute: self.auth_failures_per_minute,
            ingest_group: crate::service::group_commit::GroupConfig {
                max_events: self.ingest_group_events as usize,
                wait: std::time::Duration::from_millis(self.ingest_group_wait_ms),
            },
        }
    }
}
