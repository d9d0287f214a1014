//! The `tributary` binary: the composition root. Parses the CLI, sets up logging, and hands off.

use std::io::{BufRead, BufWriter, Write};

use anyhow::Context;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use tributary::config::{AuthMode, Cli, Command, TokenAction};
use tributary::store::Record;

async fn token(action: TokenAction) -> anyhow::Result<()> {
    let store_args = match &action {
        TokenAction::Create { store, .. } | TokenAction::Revoke { store, .. } | TokenAction::List { store } => store,
    };
    let store = tributary::server::open_store(&store_args.kind()).await.context("cannot open the store")?;
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

/// One row of a query log.
struct LoggedQuery {
    sql: String,
    database: Option<String>,
    schema: Option<String>,
    start: String,
}

async fn import_query_log(
    store: tributary::config::StoreArgs,
    file: std::path::PathBuf,
    datastore: String,
    dialect: Option<String>,
    chunk: usize,
) -> anyhow::Result<()> {
    let store = tributary::server::open_store(&store.kind()).await.context("cannot open the store")?;
    let lineage = tributary::service::Lineage::new(store.clone());
    let ds = store
        .list_datastores()
        .await
        .context("cannot list datastores")?
        .into_iter()
        .find(|d| d.name == datastore)
        .ok_or_else(|| anyhow::anyhow!("no datastore named {datastore:?}; create it with upsertDatastore first"))?;
    let dialect = match dialect {
        Some(d) => d,
        None => tributary::ingest::sql::Dialect::for_datastore_type(&ds.kind)
            .map(|d| format!("{d:?}").to_lowercase())
            .unwrap_or_else(|| "ansi".into()),
    };
    let mut reader = csv::Reader::from_path(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let headers = reader.headers()?.clone();
    let col = |name: &str| headers.iter().position(|h| h.trim().eq_ignore_ascii_case(name));
    let query = col("query_text").ok_or_else(|| anyhow::anyhow!("{}: no query_text column", file.display()))?;
    let (db, schema, start) = (col("database_name"), col("schema_name"), col("start_time"));
    let mut rows = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {} is not valid CSV", file.display(), i + 2))?;
        let get =
            |c: Option<usize>| c.and_then(|c| rec.get(c)).map(str::trim).filter(|v| !v.is_empty()).map(String::from);
        if let Some(sql) = get(Some(query)) {
            rows.push(LoggedQuery {
                sql,
                database: get(db),
                schema: get(schema),
                start: get(start).unwrap_or_default(),
            });
        }
    }
    // Accumulation depends on order (a CTAS then INSERTs): statements apply as they ran.
    rows.sort_by(|a, b| a.start.cmp(&b.start));
    let bar = indicatif::ProgressBar::new(rows.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} statements  {per_sec}  ETA {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = std::time::Instant::now();
    let caller = tributary::service::Caller::system();
    let (mut recorded, mut failed, mut unresolved) = (0usize, 0usize, std::collections::BTreeSet::new());
    let mut i = 0;
    while i < rows.len() {
        // A chunk shares one default database and schema.
        let key = (rows[i].database.clone(), rows[i].schema.clone());
        let mut j = i;
        while j < rows.len() && j - i < chunk.max(1) && (rows[j].database.clone(), rows[j].schema.clone()) == key {
            j += 1;
        }
        let statements: Vec<String> = rows[i..j].iter().map(|r| r.sql.clone()).collect();
        let (analyzed, missing) = lineage
            .ingest_sql_with(&caller, statements, &dialect, ds.id, key.0, key.1)
            .await
            .map_err(|e| anyhow::anyhow!("import stopped at row {}: {}", i + 2, e.message()))?;
        failed += analyzed.iter().filter(|s| !s.errors.is_empty()).count();
        recorded += analyzed.iter().filter(|s| s.errors.is_empty() && !s.targets.is_empty()).count();
        unresolved.extend(missing);
        bar.inc((j - i) as u64);
        i = j;
    }
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "imported {} statements in {secs:.1}s ({:.0}/s): {recorded} recorded lineage, {failed} did not parse, {} tables not in the catalog",
        rows.len(),
        rows.len() as f64 / secs.max(1e-3),
        unresolved.len()
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
        .init();
    match cli.command {
        Command::Schema => {
            let sdl = tributary::api::schema::build_schema().sdl();
            let mut out = std::io::stdout().lock();
            out.write_all(sdl.as_bytes())?;
        }
        Command::Serve(args) => {
            let store = tributary::server::open_store(&args.store.kind())
                .await
                .context("cannot open the store (check --data-dir or --neo4j-uri)")?;
            let listener = tokio::net::TcpListener::bind(&args.listen)
                .await
                .with_context(|| format!("cannot listen on {} (is the port in use? set --listen)", args.listen))?;
            let addr = listener.local_addr()?;
            tracing::info!(address = %addr, store = store.kind(), "tributary listening; GraphiQL at http://{addr}/graphql");
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
                .with_auto_create(args.openlineage_auto_create);
            tributary::server::run_lineage(
                listener,
                lineage,
                auth_on,
                &args.cors_origin,
                tributary::server::shutdown_signal(),
            )
            .await?;
            tracing::info!("stopped");
        }
        Command::Export { store, output } => {
            let store = tributary::server::open_store(&store.kind()).await.context("cannot open the store")?;
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
            let store = tributary::server::open_store(&store.kind()).await.context("cannot open the store")?;
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
                "replayed {} events in {:.1}s: {} applied, {} ignored, {} rejected, {} failed",
                report.events.len(),
                started.elapsed().as_secs_f64(),
                n("applied"),
                n("ignored"),
                n("rejected") + n("denied"),
                n("failed")
            )?;
        }
        Command::Token { action } => token(action).await?,
        Command::AnalyzeSql { dialect } => analyze_sql_lines(&dialect)?,
        Command::ImportQueryLog { store, file, datastore, dialect, chunk } => {
            import_query_log(store, file, datastore, dialect, chunk).await?
        }
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
