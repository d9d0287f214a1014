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
