//! The fault tests' harness: the real `tributary serve` as a child process (so it can be killed
//! with signal 9 or stopped with SIGTERM), OpenLineage events that each draw one edge of their
//! own, and the check that compares what clients got acknowledged with what the graph holds.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Where a test's store lives: a data directory, or the suite's Neo4j (`NEO4J_URI`).
#[derive(Clone)]
pub enum StoreAt {
    Embedded(PathBuf),
    Neo4j(String),
}

impl StoreAt {
    /// The suite's Neo4j; like the behaviour suite, a Neo4j case without one fails.
    pub fn neo4j() -> StoreAt {
        let uri = std::env::var("NEO4J_URI").unwrap_or_default();
        assert!(
            !uri.is_empty(),
            "NEO4J_URI is not set: the Neo4j fault cases need a real Neo4j (scripts/test starts one)"
        );
        StoreAt::Neo4j(uri)
    }

    fn args(&self) -> Vec<String> {
        match self {
            StoreAt::Embedded(dir) => {
                vec!["--data-dir".into(), dir.display().to_string(), "--neo4j-uri".into(), String::new()]
            }
            StoreAt::Neo4j(uri) => vec!["--neo4j-uri".into(), uri.clone()],
        }
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    l.local_addr().expect("its address").port()
}

/// `tributary serve` (auth off, zero-setup so events need no catalog) on a free loopback port.
pub struct Serve {
    child: Child,
    pub url: String,
    log: PathBuf,
}

impl Serve {
    /// Starts it and waits (at most 60 s) until `/readyz` answers 200.
    pub async fn start(store: &StoreAt, log: &Path, extra: &[&str]) -> Serve {
        let port = free_port();
        let log_file = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("the log file");
        let child = Command::new(env!("CARGO_BIN_EXE_tributary"))
            .args(["serve", "--auth", "off", "--openlineage-zero-setup", "--listen", &format!("127.0.0.1:{port}")])
            .args(store.args())
            .args(extra)
            .env("TRIBUTARY_STORE_TIMEOUT_SECS", "10")
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .expect("tributary serve starts");
        let mut serve = Serve { child, url: format!("http://127.0.0.1:{port}"), log: log.to_path_buf() };
        let started = Instant::now();
        loop {
            if let Ok(r) = reqwest::get(format!("{}/readyz", serve.url)).await {
                if r.status() == 200 {
                    return serve;
                }
            }
            if let Ok(Some(status)) = serve.child.try_wait() {
                panic!("serve exited with {status} before it was ready; log:\n{}", serve.log_text());
            }
            assert!(started.elapsed() < Duration::from_secs(60), "serve not ready in 60 s; log:\n{}", serve.log_text());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `host:port` of its listener.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// A metric's value (the sum over its label sets) from `/metrics`.
    pub async fn metric(&self, name: &str) -> f64 {
        let text = reqwest::get(format!("{}/metrics", self.url)).await.expect("/metrics answers");
        let text = text.text().await.expect("/metrics text");
        text.lines()
            .filter(|l| l.split(['{', ' ']).next() == Some(name))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// SIGSTOP, and waits until every thread of the process has stopped: from then on nothing
    /// it does changes the store until `resume` or `kill9`.
    pub async fn pause(&self) {
        self.signal("STOP");
        let started = Instant::now();
        loop {
            let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid())).expect("/proc lists its threads");
            let stopped = tasks.flatten().all(|t| {
                let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
                // The state follows the command's closing parenthesis: T (stopped) or t (traced).
                matches!(stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next()), Some('T' | 't'))
            });
            if stopped {
                return;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "serve did not stop on SIGSTOP");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// SIGCONT after `pause`.
    pub fn resume(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.pid().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{name} {} failed", self.pid());
    }

    /// `kill -9`: the process ends at once, whatever it was doing.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL is delivered");
        self.child.wait().expect("the killed serve is reaped");
    }

    /// SIGTERM, as an orchestrator stops a service.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// Its exit status, waiting at most `within`.
    pub async fn exited_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let started = Instant::now();
        while started.elapsed() < within {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    /// The log so far (every start of the test's service appends to one file).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        // Never leave a serve behind, whatever the test did.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A namespace no other test (or earlier run against the same Neo4j) uses.
pub fn namespace(test: &str) -> String {
    let host = test.replace('_', "-");
    format!("postgres://faults-{host}-{}:5432", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Event `i` of namespace `ns`: a COMPLETE of job `job_{i}` (its own run) reading `in_{i}` and
/// writing `out_{i}`, so it draws exactly one edge with one piece of evidence.
pub fn event(ns: &str, i: usize, run: &str) -> Value {
    json!({
        "eventType": "COMPLETE",
        "eventTime": chrono::Utc::now().to_rfc3339(),
        "producer": "https://github.com/tributary/faults-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": ns, "name": format!("job_{i}")},
        "inputs": [{"namespace": ns, "name": format!("analytics.public.in_{i}")}],
        "outputs": [{"namespace": ns, "name": format!("analytics.public.out_{i}")}],
    })
}

/// A batch of `n` events numbered from `first`, with their run ids.
pub fn batch(ns: &str, first: usize, n: usize) -> (Value, Vec<String>) {
    let runs: Vec<String> = (0..n).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    let events: Vec<Value> = runs.iter().enumerate().map(|(k, run)| event(ns, first + k, run)).collect();
    (Value::Array(events), runs)
}

pub async fn gql(url: &str, query: &str, variables: Value) -> Value {
    let v: Value = reqwest::Client::new()
        .post(format!("{url}/graphql"))
        .json(&json!({"query": query, "variables": variables}))
        .send()
        .await
        .expect("GraphQL answers")
        .json()
        .await
        .expect("GraphQL answers JSON");
    assert!(v.get("errors").is_none(), "GraphQL errors: {v}");
    v["data"].clone()
}

/// The stored events of `ns` by status, each with its run id (paged through).
pub async fn stored_events(url: &str, ns: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for page in 1.. {
        let d = gql(
            url,
            "query($ns: String, $p: Int) { openLineageEvents(jobNamespace: $ns, page: $p, size: 1000) { items { status runId } pages } }",
            json!({"ns": ns, "p": page}),
        )
        .await;
        let p = &d["openLineageEvents"];
        for e in p["items"].as_array().into_iter().flatten() {
            let status = e["status"].as_str().unwrap_or_default().to_string();
            out.entry(status).or_default().push(e["runId"].as_str().unwrap_or_default().to_string());
        }
        if page >= p["pages"].as_i64().unwrap_or(0) {
            break;
        }
    }
    out
}

/// Waits (at most `within`) until no event of `ns` is pending; panics with the log otherwise.
pub async fn until_none_pending(serve: &Serve, ns: &str, within: Duration) {
    let started = Instant::now();
    loop {
        let events = stored_events(&serve.url, ns).await;
        if events.get("pending").is_none_or(|p| p.is_empty()) {
            return;
        }
        assert!(started.elapsed() < within, "events still pending after {within:?}: {events:?}\n{}", serve.log_text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What the graph holds for namespace `ns`, checked against the stored events: every stored
/// event is applied (none pending, failed or half-applied), each applied event's edge
/// `in_i -> out_i` exists once with exactly one piece of evidence naming its run, and the
/// graph has nothing else. Returns how many of the `acked` run ids are in the graph.
pub async fn acknowledged_in_graph(url: &str, ns: &str, acked: &HashSet<String>) -> usize {
    acknowledged_in_graph_but(url, ns, acked, &HashSet::new()).await
}

/// `acknowledged_in_graph`, except that the events of the runs in `refused` may still be pending:
/// a request answered 503 may have stored its events before the store failed to apply them
/// (the event log is the durable point), and its retry applies them.
pub async fn acknowledged_in_graph_but(
    url: &str,
    ns: &str,
    acked: &HashSet<String>,
    refused: &HashSet<String>,
) -> usize {
    let mut events = stored_events(url, ns).await;
    if let Some(pending) = events.get_mut("pending") {
        pending.retain(|run| !refused.contains(run));
        if pending.is_empty() {
            events.remove("pending");
        }
    }
    let statuses: Vec<&String> = events.keys().filter(|s| s.as_str() != "applied").collect();
    assert!(statuses.is_empty(), "every stored event is applied; also found {statuses:?}: {events:?}");
    let applied: HashSet<&String> = events.get("applied").into_iter().flatten().collect();
    assert_eq!(applied.len(), events.get("applied").map_or(0, Vec::len), "each event is stored once");

    let datastores = gql(url, "{ datastores { id name } }", json!({})).await;
    let ds = datastores["datastores"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["name"] == ns))
        .map(|d| d["id"].clone())
        .unwrap_or(Value::Null);
    let mut containers: BTreeMap<String, i64> = BTreeMap::new();
    for page in 1.. {
        if ds.is_null() {
            break;
        }
        let d = gql(
            url,
            "query($d: Int, $p: Int) { containers(datastoreId: $d, page: $p, size: 1000) { items { id name } pages } }",
            json!({"d": ds, "p": page}),
        )
        .await;
        for c in d["containers"]["items"].as_array().into_iter().flatten() {
            containers.insert(c["name"].as_str().unwrap_or_default().to_string(), c["id"].as_i64().unwrap_or(0));
        }
        if page >= d["containers"]["pages"].as_i64().unwrap_or(0) {
            break;
        }
    }
    assert_eq!(containers.len(), 2 * applied.len(), "two containers per applied event and no others: {containers:?}");

    // Each out_i's edges, 50 aliases a query (the service's cap).
    let outs: Vec<(&String, i64)> =
        containers.iter().filter(|(n, _)| n.starts_with("out_")).map(|(n, id)| (n, *id)).collect();
    let mut found = 0;
    for chunk in outs.chunks(50) {
        let fields: String = chunk
            .iter()
            .enumerate()
            .map(|(k, (_, id))| {
                format!("e{k}: edges(containerId: {id}, size: 10) {{ items {{ sourceContainerId targetContainerId evidence {{ details }} }} }} ")
            })
            .collect();
        let d = gql(url, &format!("{{ {fields} }}"), json!({})).await;
        for (k, (name, id)) in chunk.iter().enumerate() {
            let items = d[format!("e{k}")]["items"].as_array().cloned().unwrap_or_default();
            assert_eq!(items.len(), 1, "{name} has exactly one edge: {items:?}");
            let edge = &items[0];
            let source = containers.get(&name.replacen("out_", "in_", 1)).copied();
            assert_eq!(edge["sourceContainerId"].as_i64(), source, "{name}'s edge comes from its in_");
            assert_eq!(edge["targetContainerId"].as_i64(), Some(*id));
            let evidence = edge["evidence"].as_array().cloned().unwrap_or_default();
            assert_eq!(evidence.len(), 1, "{name}'s edge has one piece of evidence: {evidence:?}");
            let run = evidence[0]["details"]["runId"].as_str().unwrap_or_default().to_string();
            assert!(applied.contains(&run), "{name}'s evidence names a stored, applied event ({run})");
            if acked.contains(&run) {
                found += 1;
            }
        }
    }
    assert_eq!(outs.len(), applied.len(), "one edge per applied event");
    found
}
