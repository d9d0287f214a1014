//! The `tributary` binary: the composition root. Parses the CLI, sets up logging, and hands off.

use std::io::{BufRead, BufWriter, IsTerminal, Write};

use anyhow::Context;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use tributary::config::{AuthMode, Cli, Command, LogKind, StoreKind, TokenAction};

/// mimalloc rather than the system allocator: a request allocates and frees many small
/// strings and JSON values across the runtime's threads, where glibc's malloc spent a sixth of
/// the ingest's CPU time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use tributary::store::Record;

/// Opens the store of a command that works on an existing store: every command but `serve`
/// (which creates the store it serves) and `import` (which fills a new one). An embedded data
/// directory without a store is refused rather than created, so that a mistyped or forgotten
/// `--data-dir` cannot make an empty store (and, for `token create`, a token the running
/// server never heard of).
async fn open_existing_store(
    kind: &StoreKind,
    command: &str,
) -> anyhow::Result<std::sync::Arc<dyn tributary::store::Store>> {
    if let StoreKind::Embedded { data_dir } = kind {
        let file = data_dir.join("tributary.db");
        if !file.is_file() {
            anyhow::bail!(
                "no store in {}: `tributary {command}` works on an existing store and creates none. Pass --data-dir \
                 (or set TRIBUTARY_DATA_DIR) to the directory `tributary serve` uses, or --neo4j-uri for Neo4j",
                data_dir.display()
            );
        }
    }
    tributary::server::open_store(kind).await.context("cannot open the store")
}

async fn token(action: TokenAction) -> anyhow::Result<()> {
    let store_args = match &action {
        TokenAction::Create { store, .. } | TokenAction::Revoke { store, .. } | TokenAction::List { store } => store,
    };
    let command = match &action {
        TokenAction::Create { .. } => "token create",
        TokenAction::Revoke { .. } => "token revoke",
        TokenAction::List { .. } => "token list",
    };
    let store = open_existing_store(&store_args.kind(), command).await?;
    let auth = tributary::auth::Auth::new(store, true);
    let fail = |e: tributary::error::Error| anyhow::anyhow!("{}", e.message());
    let mut out = std::io::stdout().lock();
    match action {
        TokenAction::Create { user, role, team, .. } => {
            let role = tributary::auth::Role::parse(&role)
                .ok_or_else(|| anyhow::anyhow!("--role must be ADMIN, MANAGER or MEMBER, not {role:?}"))?;
            let token = auth.create_token(&user, role, team).await.map_err(fail)?;
            writeln!(out, "Token for {user} ({}), shown once:", role.as_str())?;
            writeln!(out, "{token}")?;
        }
        TokenAction::Revoke { user, .. } => {
            let n = auth.revoke(&user).await.map_err(fail)?;
            writeln!(out, "revoked {n} token(s) of {user}")?;
        }
        TokenAction::List { .. } => {
            let users = auth.users().await.map_err(fail)?;
            for t in auth.tokens().await.map_err(fail)? {
                let u = users.iter().find(|u| u.name == t.user);
                writeln!(
                    out,
                    "{}…\t{}\t{}{}\tcreated {}\tlast used {}\t{}",
                    t.prefix,
                    t.user,
                    u.map(|u| u.role.as_str()).unwrap_or("?"),
                    u.and_then(|u| u.team.as_deref()).map(|t| format!(" (team {t})")).unwrap_or_default(),
                    t.created.to_rfc3339(),
                    t.last_used.map(|x| x.to_rfc3339()).unwrap_or_else(|| "never".into()),
                    if t.revoked_at.is_some() { "revoked" } else { "active" }
                )?;
            }
        }
    }
    Ok(())
}

/// Reads the rows of a query log or a definitions file, each error naming the file.
fn read_log(path: &std::path::Path, kind: LogKind) -> anyhow::Result<tributary::ingest::sql::query_log::QueryLog> {
    use tributary::ingest::sql::query_log::{read_query_log, QueryLogError};
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    read_query_log(file, kind).map_err(|e| match e {
        QueryLogError::Header(e) => anyhow::Error::new(e),
        QueryLogError::Row { row, source } => {
            anyhow::Error::new(source).context(format!("{}: row {row} is not valid CSV", path.display()))
        }
        e @ QueryLogError::NoStatementColumn(_) => anyhow::anyhow!("{}: {e}", path.display()),
    })
}

/// `tributary import-query-log`: the flags resolved, the file read, `Lineage::import_query_log`
/// with a progress bar, and its summary.
async fn import_query_log(
    store: tributary::config::StoreArgs,
    file: std::path::PathBuf,
    datastore: String,
    dialect: Option<String>,
    chunk: usize,
    kind: LogKind,
    emit_openlineage_url: Option<String>,
) -> anyhow::Result<()> {
    use tributary::ingest::sql::Dialect;
    use tributary::service::sql::ImportError;
    let store = open_existing_store(&store.kind(), "import-query-log").await?;
    let (forwarder, forwarding) = match emit_openlineage_url.filter(|u| !u.trim().is_empty()) {
        Some(url) => {
            let (f, task) = tributary::forward::Forwarder::start_waiting(url);
            (Some(f), Some(task))
        }
        None => (None, None),
    };
    let lineage = tributary::service::Lineage::new(store.clone()).with_forwarder(forwarder);
    let fail = |e: tributary::error::Error| anyhow::anyhow!("{}", e.message());
    let ds = store
        .list_datastores()
        .await
        .context("cannot list datastores")?
        .into_iter()
        .find(|d| d.name == datastore)
        .ok_or_else(|| anyhow::anyhow!("no datastore named {datastore:?}; create it with upsertDatastore first"))?;
    let dialect = match dialect {
        Some(d) => tributary::service::sql::parse_dialect(&d).map_err(fail)?,
        None => Dialect::for_datastore_type(&ds.kind).unwrap_or(Dialect::Ansi),
    };
    let log = read_log(&file, kind)?;
    let bar = indicatif::ProgressBar::new(log.rows.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} {bar:40} {pos}/{len} statements  {per_sec}  ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = std::time::Instant::now();
    let caller = tributary::service::Caller::system();
    let r = lineage.import_query_log(&caller, &ds, dialect, log, chunk, |rows| bar.inc(rows as u64)).await.map_err(
        |e| match e {
            ImportError::Stopped { row, error } => anyhow::anyhow!("import stopped at row {row}: {}", error.message()),
            ImportError::Task(e) => anyhow::Error::new(e).context("a parsing task stopped"),
            ImportError::Begin(e) => fail(e),
        },
    )?;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let total = r.rows;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "imported {total} statements in {secs:.1}s ({:.0}/s): {} recorded lineage, {} did not parse, {} tables not in the catalog",
        total as f64 / secs.max(1e-3),
        r.recorded,
        r.failed,
        r.unresolved.len()
    )?;
    writeln!(
        out,
        "  {} parsed ({} statements after splitting scripts and procedures); {} edges asserted, {} of them new; import operation {}",
        r.parsed, r.entries, r.edges_asserted, r.edges_created, r.operation_id
    )?;
    if r.runs > 0 {
        writeln!(
            out,
            "  {} runs of {} jobs recorded (a job per user, in namespace {})",
            r.runs,
            r.jobs.len(),
            r.job_namespace
        )?;
    }
    let reasons = &r.failure_reasons;
    if !reasons.is_empty() {
        writeln!(out, "  did not parse, by reason:")?;
        for (reason, n) in reasons.iter().take(10) {
            writeln!(out, "  {n:>8}  {reason}")?;
        }
        if reasons.len() > 10 {
            writeln!(out, "  {:>8}  other reasons", reasons[10..].iter().map(|r| r.1).sum::<usize>())?;
        }
    }
    if !r.unresolved.is_empty() {
        let shown: Vec<&String> = r.unresolved.iter().take(10).collect();
        writeln!(
            out,
            "  not in the catalog (external ends): {}{}",
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
            if r.unresolved.len() > 10 { ", ..." } else { "" }
        )?;
    }
    drop(out);
    if let Some(task) = forwarding {
        // The forwarding task ends once the queue is drained and the last sender is gone.
        drop(lineage);
        let _ = task.await;
    }
    Ok(())
}

/// `tributary backup --to FILE`: the embedded store only; Neo4j has its own tools.
async fn backup(kind: &StoreKind, to: std::path::PathBuf) -> anyhow::Result<()> {
    let StoreKind::Embedded { data_dir } = kind else {
        anyhow::bail!(
            "backup copies the embedded store only, and a Neo4j store is set (--neo4j-uri or NEO4J_URI): use Neo4j's own \
             tools (neo4j-admin database dump, or online backup on Enterprise) or `tributary export`"
        );
    };
    let (dir, file) = (data_dir.clone(), to.clone());
    let started = std::time::Instant::now();
    let report = tokio::task::spawn_blocking(move || tributary::store::sqlite::backup(&dir, &file))
        .await
        .context("the backup task stopped")?
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    writeln!(
        std::io::stdout().lock(),
        "backed up {} ({} pages, {:.1} MiB, schema version {}) to {} in {:.1}s",
        data_dir.join("tributary.db").display(),
        report.pages,
        report.bytes as f64 / (1024.0 * 1024.0),
        report.schema_version,
        to.display(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// `tributary analyze-sql`: the answer of GraphQL `analyzeSql` (without a datastore) for each
/// JSON line on stdin, one JSON array a line on stdout. Only the analysis is timed, so the rate
/// on stderr compares with other analysers run the same way.
fn analyze_sql_lines(dialect: &str) -> anyhow::Result<()> {
    use std::collections::HashMap;
    use tributary::ingest::sql::{self, Dialect, Options};

    let default_dialect = Dialect::parse(dialect).with_context(|| {
        format!("unknown dialect {dialect:?}: use postgres, redshift, mysql, mariadb, snowflake, bigquery, tsql, sparksql, hive, oracle, trino or ansi")
    })?;
    let text = |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_string);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut statements, mut spent) = (0usize, std::time::Duration::ZERO);
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(&line).with_context(|| format!("stdin line {}: not JSON", n + 1))?;
        let sqls: Vec<String> = match (v.get("sql"), v.get("statements")) {
            (Some(serde_json::Value::String(s)), _) => vec![s.clone()],
            (_, Some(serde_json::Value::Array(a))) => a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect(),
            _ => anyhow::bail!("stdin line {}: needs \"sql\" (a string) or \"statements\" (strings)", n + 1),
        };
        let d = match text(&v, "dialect") {
            Some(name) => {
                Dialect::parse(&name).with_context(|| format!("stdin line {}: unknown dialect {name:?}", n + 1))?
            }
            None => default_dialect,
        };
        let options = Options {
            default_database: text(&v, "default_database"),
            default_schema: text(&v, "default_schema"),
            ..Options::default()
        };
        let catalog: HashMap<String, Vec<String>> = match v.get("catalog") {
            Some(c) => serde_json::from_value(c.clone())
                .with_context(|| format!("stdin line {}: catalog must be {{table: [columns]}}", n + 1))?,
            None => HashMap::new(),
        };
        let start = std::time::Instant::now();
        let result = sql::analyze(&sqls, d, &options, &catalog);
        spent += start.elapsed();
        statements += sqls.len();
        // The field names and shape of GraphQL's SqlStatementLineage.
        let entries: Vec<serde_json::Value> = result
            .into_iter()
            .map(|s| {
                serde_json::json!({
                    "index": s.index,
                    "operation": s.operation,
                    "targets": s.targets,
                    "sources": s.sources,
                    "columns": s.columns.iter().map(|c| serde_json::json!({
                        "target": c.target, "sources": c.sources, "derived": c.derived,
                    })).collect::<Vec<_>>(),
                    "errors": s.errors,
                    "unresolved": s.unresolved,
                    "maskedSql": s.masked_sql,
                    "externalLocation": s.external_location,
                    "procedure": s.procedure,
                })
            })
            .collect();
        serde_json::to_writer(&mut out, &entries)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    let secs = spent.as_secs_f64();
    eprintln!(
        "analyze-sql: {statements} statements analysed in {secs:.4} s = {:.0} statements/s (analysis only)",
        if secs > 0.0 { statements as f64 / secs } else { 0.0 }
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal (and not with NO_COLOR set); a log file or
        // collector gets plain text.
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()))
        .init();
    match cli.command {
        Command::Schema => {
            let sdl = tributary::api::schema::build_schema().sdl();
            let mut out = std::io::stdout().lock();
            out.write_all(sdl.as_bytes())?;
        }
        Command::Serve(args) => {
            // Checked before anything starts: a wrong Kafka flag fails fast.
            let kafka = args.kafka.config().map_err(|e| anyhow::anyhow!(e))?;
            let wait = std::time::Duration::from_secs(args.store_wait_secs);
            let store = tributary::lifecycle::open_store_waiting(&args.store.kind(), wait)
                .await
                .context("cannot open the store (check --data-dir or --neo4j-uri)")?;
            let listener = tokio::net::TcpListener::bind(&args.listen)
                .await
                .with_context(|| format!("cannot listen on {} (is the port in use? set --listen)", args.listen))?;
            let addr = listener.local_addr()?;
            tracing::info!(
                address = %addr,
                store = store.kind(),
                "tributary listening; the lineage explorer at http://{addr}/ui, GraphiQL at http://{addr}/graphql"
            );
            let forwarder = args.emit_openlineage_url.clone().filter(|u| !u.trim().is_empty()).map(|url| {
                tracing::info!(url = %url, "accepted OpenLineage events are forwarded");
                tributary::forward::Forwarder::start(url)
            });
            tributary::server::spawn_retention(store.clone(), args.event_retention_days);
            let auth_on = args.auth == AuthMode::On;
            if auth_on {
                let auth = tributary::auth::Auth::new(store.clone(), true);
                if let Some(token) = auth
                    .ensure_first_admin()
                    .await
                    .map_err(|e| anyhow::anyhow!("cannot create the first admin: {}", e.message()))?
                {
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "No users yet: created the admin user `admin`. Its API token (shown once):")?;
                    writeln!(out, "{token}")?;
                    writeln!(
                        out,
                        "Send it as `Authorization: Bearer {token}`; make more with `tributary token create`."
                    )?;
                }
            } else {
                tracing::warn!("AUTHENTICATION IS OFF (TRIBUTARY_AUTH=off): every request acts as an unrestricted admin; use this for a local trial only");
            }
            let lineage = tributary::service::Lineage::new(store)
                .with_forwarder(forwarder)
                .with_auto_create(args.openlineage_auto_create)
                .with_zero_setup(args.openlineage_zero_setup)
                .with_ingest_session_time(std::time::Duration::from_millis(args.pushback.ingest_session_ms));
            tributary::lifecycle::backfill_jobs_and_runs(&lineage)
                .await
                .map_err(|e| anyhow::anyhow!("cannot record the stored events' jobs and runs: {}", e.message()))?;
            let grace = std::time::Duration::from_secs(args.shutdown_grace_secs);
            let limits = args.pushback.limits();
            let consumer = match kafka {
                Some(k) => Some(
                    tributary::kafka::spawn(lineage.clone(), k, tributary::server::shutdown_signal())
                        .map_err(|e| anyhow::anyhow!("{e} (check the --kafka-* flags)"))?,
                ),
                None => None,
            };
            tributary::lifecycle::serve_finishing_pending(listener, lineage, auth_on, &args.cors_origin, limits, grace)
                .await?;
            if let Some(consumer) = consumer {
                // The consumer commits what it stored and leaves its group, within the same grace.
                if tokio::time::timeout(grace, consumer).await.is_err() {
                    tracing::warn!(grace_secs = grace.as_secs(), "the Kafka consumer did not leave its group within the shutdown grace period; its uncommitted messages are read again by the group");
                }
            }
            tracing::info!("stopped");
        }
        Command::Export { store, output } => {
            let store = open_existing_store(&store.kind(), "export").await?;
            let records = store.export().await.context("export failed")?;
            let sink: Box<dyn Write> = match &output {
                Some(path) => {
                    Box::new(std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?)
                }
                None => Box::new(std::io::stdout().lock()),
            };
            let mut w = BufWriter::new(sink);
            for r in &records {
                serde_json::to_writer(&mut w, r)?;
                w.write_all(b"\n")?;
            }
            w.flush()?;
            tracing::info!(records = records.len(), "export written");
        }
        Command::Replay { store, after_id, status } => {
            let store = open_existing_store(&store.kind(), "replay").await?;
            let lineage = tributary::service::Lineage::new(store);
            let started = std::time::Instant::now();
            let mut seen = 0u64;
            let report = lineage
                .replay_openlineage(after_id, &status, |e| {
                    seen += 1;
                    if seen.is_multiple_of(500) {
                        let rate = seen as f64 / started.elapsed().as_secs_f64().max(1e-3);
                        tracing::info!(replayed = seen, last_id = e.id, rate = format!("{rate:.0}/s"), "replaying");
                    }
                })
                .await
                .map_err(|e| anyhow::anyhow!("replay failed: {}", e.message()))?;
            let n = |s: &str| report.events.iter().filter(|e| e.status == s).count();
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "replayed {} events in {:.1}s: {} applied, {} recorded, {} ignored, {} rejected, {} failed",
                report.events.len(),
                started.elapsed().as_secs_f64(),
                n("applied"),
                n("recorded"),
                n("ignored"),
                n("rejected") + n("denied"),
                n("failed")
            )?;
        }
        Command::Token { action } => token(action).await?,
        Command::AnalyzeSql { dialect } => analyze_sql_lines(&dialect)?,
        Command::ImportQueryLog { store, file, datastore, dialect, chunk, kind, emit_openlineage_url } => {
            import_query_log(store, file, datastore, dialect, usize::from(chunk), kind, emit_openlineage_url).await?
        }
        Command::Backup { store, to } => backup(&store.kind(), to).await?,
        Command::Import { store, file } => {
            let store = tributary::server::open_store(&store.kind()).await.context("cannot open the store")?;
            let f = std::fs::File::open(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let mut records = Vec::new();
            for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                let r: Record = serde_json::from_str(&line)
                    .with_context(|| format!("{}:{}: not an export record", file.display(), i + 1))?;
                records.push(r);
            }
            let n = store.import(records).await.context("import failed")?;
            tracing::info!(records = n, "import done");
        }
    }
    Ok(())
}
