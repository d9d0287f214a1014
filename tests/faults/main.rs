//! Faults injected into real processes (issue 21 parts 2 and 7): `kill -9` of `serve` during
//! batch ingest and SIGTERM with requests in flight, on each store (Neo4j stays up), and disk
//! trouble under the embedded store (a small tmpfs that fills). Each case counts the events
//! clients got a 2xx for and asserts that exactly that many are in the graph afterwards.
//!
//! The Neo4j going away and coming back (part 1) is tests/python/test_store_outage.py: it needs
//! a Neo4j of its own to stop, and the stock openlineage-python client as the sender.

#![allow(clippy::unwrap_used)]

mod disk;
mod harness;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::{acknowledged_in_graph, batch, namespace, until_none_pending, Serve, StoreAt};
use tributary::domain::{EventFilter, PageRequest};

/// One case at a time: each starts processes and loads the 2-core machine on its own.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `$case(store, tag)` as two tests, `<name>_embedded` (a fresh data dir) and `<name>_neo4j`.
macro_rules! on_both_stores {
    ($case:ident, $name:ident) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn embedded() {
                let _one = SERIAL.lock().await;
                let dir = tempfile::tempdir().unwrap();
                $case(StoreAt::Embedded(dir.path().join("data")), concat!(stringify!($case), "-embedded")).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn neo4j() {
                let _one = SERIAL.lock().await;
                $case(StoreAt::neo4j(), concat!(stringify!($case), "-neo4j")).await;
            }
        }
    };
}

const BATCH: usize = 50;
const CLIENTS: usize = 4;

/// Sends batches from `CLIENTS` concurrent clients until `stop`, or until the service stops
/// answering; the run ids of every event in a 2xx answer go into `acked`.
fn spawn_clients(
    url: &str,
    ns: &str,
    acked: &Arc<Mutex<HashSet<String>>>,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let next = Arc::new(AtomicUsize::new(0));
    (0..CLIENTS)
        .map(|_| {
            let (url, ns, acked, stop, next) =
                (url.to_string(), ns.to_string(), acked.clone(), stop.clone(), next.clone());
            tokio::spawn(async move {
                let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
                while !stop.load(Ordering::Relaxed) {
                    let (body, runs) = batch(&ns, next.fetch_add(BATCH, Ordering::Relaxed), BATCH);
                    match client.post(format!("{url}/api/v1/lineage")).json(&body).send().await {
                        Ok(r) if r.status().is_success() => acked.lock().unwrap().extend(runs),
                        Ok(r) => {
                            panic!("ingest answered {} while the service was up: {:?}", r.status(), r.text().await)
                        }
                        // The service was killed: this request's events are not acknowledged.
                        Err(_) => return,
                    }
                }
            })
        })
        .collect()
}

/// Pending events of `ns`, read straight from the store while no service runs.
async fn pending_in_store(store: &StoreAt, ns: &str) -> i64 {
    let kind = match store {
        StoreAt::Embedded(dir) => tributary::config::StoreKind::Embedded { data_dir: dir.clone() },
        StoreAt::Neo4j(uri) => tributary::config::StoreKind::Neo4j {
            uri: uri.clone(),
            user: std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
            password: std::env::var("NEO4J_PASSWORD").unwrap_or_default(),
            database: std::env::var("NEO4J_DATABASE").ok().filter(|d| !d.is_empty()),
        },
    };
    let s = tributary::server::open_store(&kind).await.unwrap();
    let filter =
        EventFilter { status: Some("pending".into()), job_namespace: Some(ns.into()), ..EventFilter::default() };
    s.list_events(&filter, PageRequest { page: 1, size: 1 }).await.unwrap().total
}

async fn kill9_during_batch_ingest(store: StoreAt, tag: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("serve.log");
    let ns = namespace(tag);
    let mut serve = Serve::start(&store, &log, &[]).await;
    let acked = Arc::new(Mutex::new(HashSet::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let clients = spawn_clients(&serve.url, &ns, &acked, &stop);
    let started = Instant::now();
    while acked.lock().unwrap().len() < 4 * BATCH {
        assert!(started.elapsed() < Duration::from_secs(120), "too few events acknowledged:\n{}", serve.log_text());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Mid-write: the clients keep sending, so requests are in flight as it dies (a moment
    // after a round of answers, when the next round's events are stored and being applied).
    tokio::time::sleep(Duration::from_millis(150)).await;
    serve.kill9();
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        tokio::time::timeout(Duration::from_secs(30), c).await.expect("clients stop").unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let left = pending_in_store(&store, &ns).await;
    eprintln!("{tag}: {} events acknowledged, {left} stored but not applied when serve was killed", acked.len());

    let serve = Serve::start(&store, &log, &[]).await;
    until_none_pending(&serve, &ns, Duration::from_secs(120)).await;
    if left > 0 {
        let text = serve.log_text();
        assert!(text.contains("events stored but not applied before the last stop"), "{text}");
        assert!(text.contains("pending events finished"), "{text}");
    }
    assert_eq!(acknowledged_in_graph(&serve.url, &ns, &acked).await, acked.len());
}

on_both_stores!(kill9_during_batch_ingest, kill_9_during_batch_ingest_loses_nothing_acknowledged);

/// SIGTERM while two big requests (1,000 events; 300 on Neo4j) run: both are answered 201 and applied, new
/// connections are refused at once, and the process exits 0.
async fn sigterm_drains_in_flight_ingest(store: StoreAt, tag: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("serve.log");
    let ns = namespace(tag);
    let mut serve = Serve::start(&store, &log, &["--shutdown-grace-secs", "120"]).await;
    // Long enough to be in flight when the signal comes (Neo4j takes longer per event).
    let n = if matches!(store, StoreAt::Embedded(_)) { 1000 } else { 300 };
    let mut sends = Vec::new();
    let mut acked = HashSet::new();
    for k in 0..2 {
        let (body, runs) = batch(&ns, k * n, n);
        acked.extend(runs);
        let url = serve.url.clone();
        sends.push(tokio::spawn(async move {
            let r = reqwest::Client::new().post(format!("{url}/api/v1/lineage")).json(&body).send().await.unwrap();
            (r.status(), r.json::<serde_json::Value>().await.unwrap())
        }));
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(sends.iter().all(|s| !s.is_finished()), "the requests are still in flight when the signal comes");
    serve.terminate();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(reqwest::get(format!("{}/healthz", serve.url)).await.is_err(), "no new connection once stopping");
    for s in sends {
        let (status, report) = s.await.unwrap();
        assert_eq!(status, 201, "{report}");
        assert_eq!(report["applied"], n, "{report}");
    }
    let status = serve.exited_within(Duration::from_secs(60)).await.expect("serve exits after draining");
    assert!(status.success(), "{status}");
    let text = serve.log_text();
    assert!(text.contains("requests in flight finished"), "{text}");

    let serve = Serve::start(&store, &log, &[]).await;
    assert_eq!(acknowledged_in_graph(&serve.url, &ns, &acked).await, 2 * n);
}

on_both_stores!(sigterm_drains_in_flight_ingest, sigterm_drains_in_flight_ingest);

/// Posts one batch; `(status, Retry-After, body)`.
async fn post(url: &str, body: &serde_json::Value) -> (u16, Option<String>, String) {
    let r = reqwest::Client::new().post(format!("{url}/api/v1/lineage")).json(body).send().await.unwrap();
    let retry = r.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(String::from);
    (r.status().as_u16(), retry, r.text().await.unwrap())
}

/// The disk fills during ingest: a clear 503 with `Retry-After` (and a log line naming the data
/// directory), never a corrupt store; once space is freed the refused batch and the next ones
/// are taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_answers_503_and_ingest_resumes_once_space_is_freed() {
    let _one = SERIAL.lock().await;
    const NAME: &str = "a_full_disk_answers_503_and_ingest_resumes_once_space_is_freed";
    if disk::opted_out(NAME) {
        return;
    }
    let disk = disk::Mounted::tmpfs("24m").unwrap_or_else(|e| disk::cannot(NAME, &e));
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("serve.log");
    let data = disk.dir.join("data");
    let store = StoreAt::Embedded(data.clone());
    let ns = namespace("disk-full");
    let serve = Serve::start(&store, &log, &[]).await;
    let mut acked = HashSet::new();
    let mut next = 0;
    for _ in 0..2 {
        let (body, runs) = batch(&ns, next, BATCH);
        next += BATCH;
        assert_eq!(post(&serve.url, &body).await.0, 201);
        acked.extend(runs);
    }
    let ballast = disk.fill();
    // Each batch needs new pages sooner or later; the first refused one is kept to send again.
    let mut refused = None;
    for _ in 0..100 {
        let (body, runs) = batch(&ns, next, BATCH);
        next += BATCH;
        let (status, retry_after, text) = post(&serve.url, &body).await;
        if status == 201 {
            acked.extend(runs);
            continue;
        }
        assert_eq!(status, 503, "{text}");
        assert_eq!(retry_after.as_deref(), Some("2"));
        assert!(text.contains("unavailable"), "{text}");
        refused = Some((body, runs));
        break;
    }
    let (body, runs) = refused.expect("a full disk refuses ingest within 100 batches");
    let text = serve.log_text();
    assert!(text.contains("embedded store cannot write its data directory"), "{text}");
    assert!(text.contains("the disk is full") && text.contains(&data.display().to_string()), "{text}");

    std::fs::remove_file(ballast).unwrap();
    assert_eq!(post(&serve.url, &body).await.0, 201, "the refused batch is taken once space is freed");
    acked.extend(runs);
    for _ in 0..2 {
        let (body, runs) = batch(&ns, next, BATCH);
        next += BATCH;
        assert_eq!(post(&serve.url, &body).await.0, 201);
        acked.extend(runs);
    }
    assert_eq!(acknowledged_in_graph(&serve.url, &ns, &acked).await, acked.len());
    drop(serve);
    assert_eq!(disk::integrity(&data.join("tributary.db")), "ok");
}

/// The data directory turns read-only under the running service (the kernel remounts a file
/// system read-only after an error): ingest answers 503 with `Retry-After` and a log line naming
/// the data directory; after the operator's repair, the store is whole and holds every event
/// acknowledged before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_turned_read_only_answers_503_and_the_store_stays_whole() {
    let _one = SERIAL.lock().await;
    const NAME: &str = "a_data_dir_turned_read_only_answers_503_and_the_store_stays_whole";
    if disk::opted_out(NAME) {
        return;
    }
    let disk = disk::Mounted::ext4(64).unwrap_or_else(|e| disk::cannot(NAME, &e));
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("serve.log");
    let data = disk.dir.join("data");
    let store = StoreAt::Embedded(data.clone());
    let ns = namespace("read-only");
    let mut serve = Serve::start(&store, &log, &[]).await;
    let mut acked = HashSet::new();
    for k in 0..2 {
        let (body, runs) = batch(&ns, k * BATCH, BATCH);
        assert_eq!(post(&serve.url, &body).await.0, 201);
        acked.extend(runs);
    }
    // `synchronous=NORMAL` syncs at checkpoints, not at each commit: what a failing disk never
    // received is lost as in an OS crash. The test is about what follows, so it syncs first.
    assert!(std::process::Command::new("sync").status().unwrap().success());
    if let Err(e) = disk.fail_read_only() {
        disk::cannot(NAME, &e);
    }
    assert!(disk.is_read_only(), "the kernel turned the mount read-only");
    let (body, _) = batch(&ns, 2 * BATCH, BATCH);
    let (status, retry_after, text) = post(&serve.url, &body).await;
    assert_eq!(status, 503, "{text}");
    assert_eq!(retry_after.as_deref(), Some("2"));
    let log_text = serve.log_text();
    assert!(log_text.contains("embedded store cannot write its data directory"), "{log_text}");
    assert!(log_text.contains(&data.display().to_string()), "{log_text}");

    serve.terminate();
    serve.exited_within(Duration::from_secs(30)).await.expect("serve stops");
    disk.repair();
    assert_eq!(disk::integrity(&data.join("tributary.db")), "ok");
    let serve = Serve::start(&store, &log, &[]).await;
    assert_eq!(acknowledged_in_graph(&serve.url, &ns, &acked).await, acked.len());
}

/// Past `--shutdown-grace-secs`, serve exits without the requests still running; their events
/// were stored, so the next start finishes them and nothing stored is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_grace_period_serve_exits_and_the_next_start_finishes_the_events() {
    let _one = SERIAL.lock().await;
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("serve.log");
    let store = StoreAt::Embedded(tmp.path().join("data"));
    let ns = namespace("grace");
    let mut serve = Serve::start(&store, &log, &["--shutdown-grace-secs", "0"]).await;
    let (body, _) = batch(&ns, 0, 1000);
    let url = serve.url.clone();
    let send = tokio::spawn(async move {
        reqwest::Client::new().post(format!("{url}/api/v1/lineage")).json(&body).send().await.map(|r| r.status())
    });
    // Stored (one transaction, first) and being applied when the signal comes.
    let started = Instant::now();
    while pending_in_store(&store, &ns).await == 0 {
        assert!(started.elapsed() < Duration::from_secs(30) && !send.is_finished(), "{}", serve.log_text());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    serve.terminate();
    let status = serve.exited_within(Duration::from_secs(10)).await.expect("serve exits at once with grace 0");
    assert!(status.success(), "{status}");
    assert!(send.await.unwrap().is_err(), "the request in flight got no answer");
    assert!(serve.log_text().contains("requests still in flight after the shutdown grace period"));
    let left = pending_in_store(&store, &ns).await;
    assert!(left > 0, "some events were left pending");

    let serve = Serve::start(&store, &log, &[]).await;
    until_none_pending(&serve, &ns, Duration::from_secs(60)).await;
    assert!(serve.log_text().contains("pending events finished"));
    // Nothing was acknowledged; all 1,000 were stored before the exit and are applied now.
    let stored = harness::stored_events(&serve.url, &ns).await;
    assert_eq!(stored.get("applied").map_or(0, Vec::len), 1000, "{stored:?}");
    assert_eq!(acknowledged_in_graph(&serve.url, &ns, &HashSet::new()).await, 0);
}

/// `serve` whose Neo4j never comes up: it keeps trying, saying so, and gives up after
/// `--store-wait-secs` with a message naming the URI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_gives_up_on_an_unreachable_neo4j_after_the_wait() {
    let _one = SERIAL.lock().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let uri = format!("bolt://127.0.0.1:{port}");
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["serve", "--auth", "off", "--listen", "127.0.0.1:0", "--neo4j-uri", &uri, "--store-wait-secs", "3"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(elapsed >= Duration::from_secs(3) && elapsed < Duration::from_secs(30), "{elapsed:?}");
    assert!(text.matches("Neo4j not reachable yet; will keep trying until --store-wait-secs").count() >= 2, "{text}");
    assert!(text.contains("Neo4j still not reachable; giving up"), "{text}");
    assert!(text.contains(&format!("Neo4j at {uri} could not be reached within 3 s")), "{text}");
}
