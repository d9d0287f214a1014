//! The `tributary` binary: the composition root. Parses the CLI, sets up logging, and hands off.

use std::io::{BufRead, BufWriter, Write};

use anyhow::Context;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use tributary::config::{Cli, Command};
use tributary::store::Record;

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
            let lineage = tributary::service::Lineage::new(store)
                .with_forwarder(forwarder)
                .with_auto_create(args.openlineage_auto_create);
            tributary::server::run_lineage(listener, lineage, &args.cors_origin, tributary::server::shutdown_signal())
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
