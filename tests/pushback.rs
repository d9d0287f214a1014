//! Push-back and the load program, on the real binary over loopback, on each store: past its
//! concurrency limit REST ingest answers 503 with `Retry-After` while GraphQL reads still
//! answer; an address that keeps failing authentication is answered 429 before its token is
//! looked at; a short `tributary-load` run has no error and every acknowledged event applied.
//! (A correctness run, never a timing check: the figures are in BENCHMARKS.md.)

#![allow(clippy::unwrap_used)]

#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_tributary");
const LOAD: &str = env!("CARGO_BIN_EXE_tributary-load");

/// The cases spawn processes that each want the CPU; one at a time keeps them quick.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Clone, Copy, Debug)]
enum StoreKind {
    Embedded,
    Neo4j,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `NEO4J_URI` for the Neo4j cases; they fail without it unless the run opted out.
fn neo4j_uri() -> Option<String> {
    skip_neo4j::neo4j_uri_or_skip()
}

/// A command of the binary on the case's store.
fn command(kind: StoreKind, dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    match kind {
        StoreKind::Embedded => {
            cmd.env_remove("NEO4J_URI").env("TRIBUTARY_DATA_DIR", dir.join("data"));
        }
        StoreKind::Neo4j => {
            cmd.env("NEO4J_URI", neo4j_uri().unwrap_or_default());
        }
    }
    cmd
}

/// A new admin's token, made with `tributary token create` (its last line).
fn admin_token(kind: StoreKind, dir: &Path, user: &str) -> String {
    let out = command(kind, dir).args(["token", "create", "--user", user, "--role", "ADMIN"]).output().unwrap();
    assert!(out.status.success(), "token create: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().last().unwrap().trim().to_string()
}

/// `tributary serve` on a free loopback port, its log in `dir/serve.log`; killed on drop.
struct Serve {
    child: Child,
    addr: String,
    url: String,
    log: std::path::PathBuf,
}

impl Serve {
    #[allow(clippy::zombie_processes)] // Drop kills and waits.
    fn start(kind: StoreKind, dir: &Path, args: &[&str]) -> Serve {
        let addr = format!("127.0.0.1:{}", free_port());
        let log = dir.join("serve.log");
        let child = command(kind, dir)
            .arg("serve")
            .args(["--listen", &addr])
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < deadline, "serve did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Serve { child, url: format!("http://{addr}"), addr, log }
    }

    /// The log as text, without the colours' escape sequences.
    fn log(&self) -> String {
        let raw = std::fs::read_to_string(&self.log).unwrap();
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw.as_str();
        while let Some(i) = rest.find('\x1b') {
            out.push_str(&rest[..i]);
            rest = rest[i..].find('m').map_or("", |j| &rest[i + j + 1..]);
        }
        out.push_str(rest);
        out
    }

    async fn metric(&self, name: &str) -> f64 {
        let text = reqwest::get(format!("{}/metrics", self.url)).await.unwrap().text().await.unwrap();
        text.lines().find_map(|l| l.strip_prefix(&format!("{name} "))).map(|v| v.trim().parse().unwrap()).unwrap_or(0.0)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The case's two tests: on the embedded store, and on Neo4j.
macro_rules! on_each_store {
    ($case:ident, $embedded:ident, $neo4j:ident) => {
        #[tokio::test]
        async fn $embedded() {
            $case(StoreKind::Embedded).await;
        }

        #[tokio::test]
        async fn $neo4j() {
            if neo4j_uri().is_some() {
                $case(StoreKind::Neo4j).await;
            }
        }
    };
}

/// A case's start: its turn, a directory, an admin's token and `serve` with `args`.
async fn start(
    kind: StoreKind,
    user: &str,
    args: &[&str],
) -> (tokio::sync::MutexGuard<'static, ()>, tempfile::TempDir, String, Serve) {
    let turn = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    // `serve` first: it creates the store, and `token create` refuses a directory with none.
    let serve = Serve::start(kind, dir.path(), args);
    let token = admin_token(kind, dir.path(), user);
    (turn, dir, token, serve)
}

fn event(ns: &str, run: &str) -> Value {
    json!({
        "eventType": "COMPLETE",
        "eventTime": chrono::Utc::now().to_rfc3339(),
        "producer": "https://example.com/producer",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": ns, "name": "copy"},
        "inputs": [{"namespace": ns, "name": "db.public.src"}],
        "outputs": [{"namespace": ns, "name": "db.public.dst"}],
    })
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap()
}

// ------------------------------------------------------------------ the ingest limit

async fn past_the_limit_ingest_is_refused_and_reads_answer(kind: StoreKind) {
    let (_turn, _dir, token, s) =
        start(kind, "pushback-admin", &["--ingest-concurrency", "1", "--ingest-queue", "0"]).await;
    let ns = format!("file://pushback-{}", uuid::Uuid::new_v4().simple());
    let held_run = uuid::Uuid::new_v4().to_string();
    let body = serde_json::to_vec(&event(&ns, &held_run)).unwrap();

    // The one slot, held: an ingest whose body has not all arrived yet.
    let mut held = std::net::TcpStream::connect(&s.addr).unwrap();
    let head = format!(
        "POST /api/v1/lineage HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        s.addr,
        body.len()
    );
    held.write_all(head.as_bytes()).unwrap();
    held.write_all(&body[..10]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.metric("tributary_ingest_in_flight").await < 1.0 {
        assert!(Instant::now() < deadline, "the held ingest never took its slot");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let client = http();
    let r =
        client.post(format!("{}/api/v1/lineage", s.url)).bearer_auth(&token).body(body.clone()).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "1");
    let detail: Value = r.json().await.unwrap();
    assert_eq!(detail, json!({"detail": "ingest is at its concurrency limit (1 running, 0 waiting); retry after 1 s"}));
    // Every REST ingest route shares the limit.
    for path in ["/api/lineage/openlineage", "/api/v1/openlineage/lineage", "/v1/api/lineage"] {
        let r = client.post(format!("{}{path}", s.url)).bearer_auth(&token).body(body.clone()).send().await.unwrap();
        assert_eq!(r.status(), 503, "{path}");
        assert_eq!(r.headers()["retry-after"], "1", "{path}");
    }
    // So does the GraphQL mutation, with a code.
    let gql = |query: &'static str, variables: Value| {
        let req = client
            .post(format!("{}/graphql", s.url))
            .bearer_auth(&token)
            .json(&json!({"query": query, "variables": variables}));
        async move { req.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let v =
        gql("mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { applied } }", json!({"e": [event(&ns, "r2")]}))
            .await;
    assert_eq!(v["errors"][0]["extensions"]["code"], "OVERLOADED", "{v}");
    assert_eq!(v["errors"][0]["message"], "ingest is at its concurrency limit (1 running, 0 waiting); retry after 1 s");
    // Reads do not wait for the slot.
    let v = gql("{ datastores { id } me { user } }", json!({})).await;
    assert!(v.get("errors").is_none(), "{v}");
    assert_eq!(v["data"]["me"]["user"], "pushback-admin");
    assert_eq!(s.metric("tributary_ingest_refused_total").await, 5.0);
    assert!(s.log().contains("ingest refused: at its concurrency limit"), "{}", s.log());
    // Refused before its body is read: a 50 MiB ingest whose first 64 KiB only are sent gets its
    // 503 at once, with the rest of the body never sent.
    let mut slow = std::net::TcpStream::connect(&s.addr).unwrap();
    let head = format!(
        "POST /api/v1/lineage HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        s.addr,
        50 << 20
    );
    slow.write_all(head.as_bytes()).unwrap();
    slow.write_all(&[b' '; 64 * 1024]).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = [0u8; 512];
    let n = slow.read(&mut answer).expect("the refusal arrives while most of the body is unsent");
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    drop(slow);
    assert_eq!(s.metric("tributary_ingest_refused_total").await, 6.0);

    // The held request finishes and is answered; then the slot is free again.
    held.write_all(&body[10..]).unwrap();
    let mut answer = String::new();
    held.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let r = client.post(format!("{}/api/v1/lineage", s.url)).bearer_auth(&token).body(body).send().await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(s.metric("tributary_ingest_in_flight").await, 0.0);
    // Nothing refused was stored: of this case's events, only the held one (and its duplicate).
    let count = |run: &str| {
        let vars = json!({"ns": ns, "run": run});
        gql("query($ns: String!, $run: String) { openLineageEvents(jobNamespace: $ns, runId: $run) { total } }", vars)
    };
    assert_eq!(count("r2").await["data"]["openLineageEvents"]["total"], 0);
    assert!(count(&held_run).await["data"]["openLineageEvents"]["total"].as_u64().unwrap() >= 1);
}

on_each_store!(
    past_the_limit_ingest_is_refused_and_reads_answer,
    past_the_limit_ingest_is_refused_and_reads_answer_embedded,
    past_the_limit_ingest_is_refused_and_reads_answer_neo4j
);

// ------------------------------------------------------------------ the auth throttle

async fn failed_authentication_is_throttled_per_address(kind: StoreKind) {
    let (_turn, _dir, token, s) = start(kind, "throttle-admin", &["--auth-failures-per-minute", "3"]).await;
    let client = http();
    let query = json!({"query": "{ me { user } }"});
    // Without a token nothing is guessed: not counted.
    for _ in 0..5 {
        let r = client.post(format!("{}/graphql", s.url)).json(&query).send().await.unwrap();
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "{v}");
    }
    // Three wrong tokens: three refusals as usual, by REST and by GraphQL.
    for path in ["/api/v1/lineage", "/graphql", "/api/lineage/graph?container_id=1"] {
        let r = if path == "/graphql" {
            client.post(format!("{}{path}", s.url)).bearer_auth("trb_wrong").json(&query).send().await.unwrap()
        } else if path.starts_with("/api/v1") {
            client.post(format!("{}{path}", s.url)).bearer_auth("trb_wrong").json(&json!([])).send().await.unwrap()
        } else {
            client.get(format!("{}{path}", s.url)).bearer_auth("trb_wrong").send().await.unwrap()
        };
        let status = r.status().as_u16();
        let v: Value = r.json().await.unwrap();
        if path == "/graphql" {
            assert_eq!(v["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "{v}");
        } else {
            assert_eq!(status, 401, "{path}: {v}");
        }
    }
    // Now the address is out of failures: 429 before any token is looked at, even a good one.
    for _ in 0..3 {
        let r = client.post(format!("{}/graphql", s.url)).bearer_auth(&token).json(&query).send().await.unwrap();
        assert_eq!(r.status(), 429);
        let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=20).contains(&wait), "{wait}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["errors"][0]["extensions"]["code"], "TOO_MANY_REQUESTS", "{v}");
        assert!(v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("too many failed authentications from 127.0.0.1"));
    }
    let r = client.post(format!("{}/api/v1/lineage", s.url)).bearer_auth(&token).json(&json!([])).send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.json::<Value>().await.unwrap()["detail"]
        .as_str()
        .unwrap()
        .starts_with("too many failed authentications"));
    // Health and metrics are not behind it.
    assert_eq!(reqwest::get(format!("{}/healthz", s.url)).await.unwrap().status(), 200);
    assert_eq!(s.metric("tributary_auth_throttled_total").await, 4.0);
    // One warning for the block, however many requests it refused.
    let log = s.log();
    assert_eq!(log.matches("authentication failures throttled for a client address").count(), 1, "{log}");
    assert!(log.contains("address=127.0.0.1") && log.contains("failures=3"), "{log}");
}

on_each_store!(
    failed_authentication_is_throttled_per_address,
    failed_authentication_is_throttled_per_address_embedded,
    failed_authentication_is_throttled_per_address_neo4j
);

// ------------------------------------------------------------------ the load program

/// A few seconds of the mixed load: no error, no refusal, and every acknowledged event stored,
/// applied and in the graph (the program checks; the JSON says what it found).
async fn a_short_load_run_loses_nothing(kind: StoreKind) {
    let (_turn, dir, token, s) = start(kind, "load-admin", &[]).await;
    let json_path = dir.path().join("load.json");
    let mut load = Command::new(LOAD)
        .args(["--url", &s.url, "--duration-secs", "3", "--baseline-secs", "1", "--tables", "30"])
        .args(["--pid", &s.child.id().to_string(), "--json", json_path.to_str().unwrap()])
        .env("TRIBUTARY_TOKEN", &token)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = load.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = load.kill();
            panic!("tributary-load did not finish in 300 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut out = String::new();
    load.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut err = String::new();
    load.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "tributary-load failed:\n{out}\n{err}\n{}", s.log());
    let r: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    assert_eq!(r["errors"], 0, "{r}");
    assert_eq!(r["refused"], 0, "{r}");
    let acknowledged = r["events_acknowledged"].as_u64().unwrap();
    // The seeded chain (29 events) and at least one batch from the writers.
    assert!(acknowledged > 29, "{r}");
    assert_eq!(r["verification"], json!({"stored": acknowledged, "applied": acknowledged, "edges_missing": 0}), "{r}");
    let ops: Vec<&str> = r["operations"].as_array().unwrap().iter().map(|o| o["operation"].as_str().unwrap()).collect();
    for op in ["lineageGraph", "impact", "piiFlow", "ingest batch"] {
        assert!(ops.contains(&op), "{op} missing: {r}");
    }
    assert!(r["rss_start_kib"].as_u64().unwrap() > 0 && r["rss_end_kib"].as_u64().unwrap() > 0, "{r}");
    assert!(out.contains("result: ok"), "{out}");
}

on_each_store!(
    a_short_load_run_loses_nothing,
    a_short_load_run_loses_nothing_embedded,
    a_short_load_run_loses_nothing_neo4j
);
