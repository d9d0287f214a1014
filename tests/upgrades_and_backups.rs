//! Upgrades and backups, with the real binary: a store written by schema version 1 is migrated
//! on start and answers every recorded query as version 1 did, on the embedded store and on
//! Neo4j; a store newer than the binary is refused with a message naming the versions; `backup`
//! copies the embedded store while `serve` ingests, and the copy holds every event acknowledged
//! before the backup began.
//!
//! The version-1 data is committed in tests/fixtures/stores/v1, made by its `make_fixture.py`
//! with the binary of that version: the embedded store file itself, and for Neo4j a dump of every
//! node and relationship that binary wrote (`neo4j-graph.json`), which the tests recreate as they
//! were, with no version recorded, since only committed files and the current binary are at hand.
//!
//! The Neo4j cases need `NEO4J_URI` (`scripts/test` starts a Neo4j) and take turns on it.

#![allow(clippy::unwrap_used)]

#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tributary::store::neo4j::Neo4jStore;

const BIN: &str = env!("CARGO_BIN_EXE_tributary");

fn fixture(name: &str) -> PathBuf {
    fixture_of("v1", name)
}

/// A file of the fixture made by schema version `version` ("v1", "v2").
fn fixture_of(version: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stores").join(version).join(name)
}

fn read_json(name: &str) -> Value {
    read_json_of("v1", name)
}

fn read_json_of(version: &str, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_of(version, name)).unwrap()).unwrap()
}

/// `tributary <args>` with the store given by `store` (`--data-dir D` or `--neo4j-uri U`).
fn tributary(args: &[&str], store: &[&str]) -> Output {
    Command::new(BIN).args(args).args(store).env_remove("NEO4J_URI").output().expect("run tributary")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A `serve` process whose log goes to a file the test reads.
struct Server {
    child: Child,
    url: String,
    log: PathBuf,
    _log_dir: tempfile::TempDir,
}

impl Server {
    #[allow(clippy::zombie_processes)] // Drop kills and waits.
    fn start(store: &[&str], extra: &[&str]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let listen = format!("127.0.0.1:{port}");
        let log_dir = tempfile::tempdir().unwrap();
        let log = log_dir.path().join("serve.log");
        let child = Command::new(BIN)
            .args(["serve", "--listen", &listen, "--event-retention-days", "0"])
            .args(store)
            .args(extra)
            .env_remove("NEO4J_URI")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start tributary serve");
        let mut server = Server { child, url: format!("http://{listen}"), log, _log_dir: log_dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(&listen).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("serve exited ({status}) before listening:\n{}", server.log());
            }
            assert!(Instant::now() < deadline, "serve did not listen on {listen}:\n{}", server.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The log so far, without the colour codes the formatter writes.
    fn log(&self) -> String {
        let raw = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                // ESC [ ... m
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    /// POSTs OpenLineage events; the ingest report.
    async fn events(&self, token: &str, events: Value) -> Value {
        let req = reqwest::Client::new().post(format!("{}/api/v1/lineage", self.url)).bearer_auth(token);
        req.json(&events).send().await.unwrap().json().await.unwrap()
    }

    async fn gql(&self, token: Option<&str>, query: &str) -> Value {
        let mut req = reqwest::Client::new().post(format!("{}/graphql", self.url)).json(&json!({ "query": query }));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send().await.unwrap().json().await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every query of queries.json, answered by `server` as the fixture's tokens, against what
/// version 1 answered.
async fn assert_same_answers(server: &Server) {
    assert_same_answers_as("v1", server).await
}

/// `assert_same_answers` against the fixture of `version` (the queries are version 1's).
async fn assert_same_answers_as(version: &str, server: &Server) {
    let tokens = read_json_of(version, "tokens.json");
    let answers = read_json_of(version, "answers.json");
    let queries = read_json("queries.json");
    for q in queries.as_array().unwrap() {
        let name = q["name"].as_str().unwrap();
        let token = tokens[q["token"].as_str().unwrap_or("admin")].as_str().unwrap();
        let got = server.gql(Some(token), q["query"].as_str().unwrap()).await;
        assert!(got.get("errors").is_none(), "{name}: {got:#}");
        assert_eq!(got["data"], answers[name], "{name}: the answer differs from version 1's");
    }
}

/// The jobs and runs an upgraded store holds equal what its stored events say (read back as
/// stored, and folded here by the rule a run follows: its latest terminal state, else its
/// latest): the upgrade recorded them from the events, which it kept.
async fn assert_jobs_from_events(server: &Server, token: &str) {
    let events = server
        .gql(
            Some(token),
            "{ openLineageEvents(size: 1000) { items { status jobNamespace jobName runId eventType eventTime } } }",
        )
        .await;
    let mut runs: std::collections::BTreeMap<String, (String, Vec<(String, String)>)> = Default::default();
    for e in events["data"]["openLineageEvents"]["items"].as_array().unwrap() {
        if !["applied", "recorded", "ignored"].contains(&e["status"].as_str().unwrap()) {
            continue;
        }
        let (Some(run), Some(ns), Some(job)) = (e["runId"].as_str(), e["jobNamespace"].as_str(), e["jobName"].as_str())
        else {
            continue;
        };
        let entry = runs.entry(run.to_string()).or_insert_with(|| (format!("{ns}/{job}"), Vec::new()));
        entry.1.push((
            e["eventTime"].as_str().unwrap().to_string(),
            e["eventType"].as_str().unwrap_or("OTHER").to_string(),
        ));
    }
    assert!(!runs.is_empty(), "the fixture has runs: {events:#}");
    for (run, (job, mut states)) in runs {
        states.sort();
        let terminal = states.iter().rev().find(|(_, s)| ["COMPLETE", "FAIL", "ABORT"].contains(&s.as_str()));
        let state = &terminal.or(states.last()).unwrap().1;
        let q = format!("{{ run(runId: \"{run}\") {{ state job {{ namespace name }} states {{ state }} }} }}");
        let got = server.gql(Some(token), &q).await;
        let r = &got["data"]["run"];
        assert_eq!(r["state"].as_str(), Some(state.as_str()), "{run}: {got:#}");
        assert_eq!(format!("{}/{}", r["job"]["namespace"].as_str().unwrap(), r["job"]["name"].as_str().unwrap()), job);
        assert_eq!(r["states"].as_array().unwrap().len(), states.len(), "{run}: {got:#}");
    }
}

/// The log line of each migration step, as `(from, to)`.
fn migrations_logged(log: &str) -> Vec<(String, String)> {
    log.lines()
        .filter(|l| l.contains("store schema migrated"))
        .map(|l| {
            let field = |key: &str| {
                let at = l.find(&format!("{key}=")).unwrap_or_else(|| panic!("no {key} in {l}")) + key.len() + 1;
                l[at..].split_whitespace().next().unwrap().to_string()
            };
            (field("from"), field("to"))
        })
        .collect()
}

fn user_version(db: &Path) -> i64 {
    rusqlite::Connection::open(db).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

#[tokio::test]
async fn a_version_1_data_directory_is_migrated_and_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tributary.db");
    std::fs::copy(fixture("tributary.db"), &db).unwrap();
    assert_eq!(user_version(&db), 0, "version 1 recorded no version");
    let data = dir.path().to_str().unwrap();
    {
        let server = Server::start(&["--data-dir", data], &[]);
        assert_same_answers(&server).await;
        let steps: Vec<(String, String)> =
            [("1", "2"), ("2", "3"), ("3", "4")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(migrations_logged(&server.log()), steps, "{}", server.log());
        assert_jobs_from_events(&server, read_json("tokens.json")["admin"].as_str().unwrap()).await;
    }
    assert_eq!(user_version(&db), tributary::store::sqlite::SCHEMA_VERSION);
    // A second start finds the store current: nothing to migrate, the same answers.
    let server = Server::start(&["--data-dir", data], &[]);
    assert_same_answers(&server).await;
    assert!(migrations_logged(&server.log()).is_empty(), "{}", server.log());
}

/// The tables and indexes of the store file `db`, by name, with their SQL normalised (a table
/// rebuilt under a temporary name and renamed has its name quoted, and its own line breaks).
fn schema_of(db: &Path) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).unwrap();
    rows.map(|r| {
        let (name, sql) = r.unwrap();
        (name, sql.replace('"', "").split_whitespace().collect::<Vec<_>>().join(" "))
    })
    .collect()
}

/// Version 3 rebuilt `evidence` keyed by its primary key and dropped an index of `edges`: a store
/// of version 2 (made by that binary, tests/fixtures/stores/v2) is migrated at start, answers as
/// version 2 did, keeps taking events, and ends with the tables and indexes of a new store.
#[tokio::test]
async fn a_version_2_data_directory_is_migrated_and_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tributary.db");
    std::fs::copy(fixture_of("v2", "tributary.db"), &db).unwrap();
    assert_eq!(user_version(&db), 2);
    let data = dir.path().to_str().unwrap();
    {
        let server = Server::start(&["--data-dir", data], &[]);
        assert_same_answers_as("v2", &server).await;
        let steps: Vec<(String, String)> =
            [("2", "3"), ("3", "4")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(migrations_logged(&server.log()), steps, "{}", server.log());
        let token = read_json_of("v2", "tokens.json")["admin"].as_str().unwrap().to_string();
        assert_jobs_from_events(&server, &token).await;
        // The rebuilt evidence table takes new rows and updates the ones it holds: a new run of
        // the fixture's job writes another table, so its two edges are new (inserted with their
        // evidence) and the job's earlier evidence retires (updated in place).
        let ev = json!({
            "eventType": "COMPLETE", "eventTime": "2026-11-03T01:00:00Z",
            "producer": "https://example.com/fixture",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": "44444444-4444-4444-8444-444444444444"},
            "job": {"namespace": "etl", "name": "load_facts"},
            "inputs": [{"namespace": "postgres://db.example.com:5432", "name": "shop.public.orders"},
                       {"namespace": "postgres://db.example.com:5432", "name": "shop.public.customers"}],
            "outputs": [{"namespace": "snowflake://acct", "name": "ANALYTICS.MART.DAILY"}],
        });
        let r = server.events(&token, json!([ev])).await;
        assert_eq!(r["events"][0]["status"], "applied", "{r:#}");
        assert_eq!(r["events"][0]["summary"]["edges_created"], 2, "{r:#}");
        assert!(r["events"][0]["summary"]["evidence_retired"].as_i64().unwrap() > 0, "{r:#}");
        let edges = server
            .gql(Some(&token), "{ edges(containerId: 4) { items { sourceContainerId evidence { details } } } }")
            .await;
        let items = edges["data"]["edges"]["items"].as_array().unwrap();
        let from: BTreeSet<i64> = items.iter().filter_map(|e| e["sourceContainerId"].as_i64()).collect();
        assert!(from.contains(&1) && from.contains(&2), "{edges:#}");
        assert!(
            items.iter().any(|e| e["evidence"][0]["details"]["runId"] == "44444444-4444-4444-8444-444444444444"),
            "{edges:#}"
        );
    }
    assert_eq!(user_version(&db), tributary::store::sqlite::SCHEMA_VERSION);
    // A new store, made by `import` (the one command besides `serve` that creates a store).
    let new = tempfile::tempdir().unwrap();
    let out =
        tributary(&["import", empty_export(&new).to_str().unwrap()], &["--data-dir", new.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        schema_of(&db),
        schema_of(&new.path().join("tributary.db")),
        "the migrated store's schema differs from a new one's"
    );
}

/// Jobs, runs and health as of an instant need nothing new stored (#45): the runs an upgrade
/// records from a version 2 store's events hold the states and datasets, with their times, that
/// an as-of answer reads. The fixture's `experiment` run FAILed writing DAILY (container 4): as of
/// an instant before its rerun it is still the job's latest run and DAILY is FAILED; as of an
/// instant after the rerun, and today, DAILY is FRESH and the rerun is the latest.
#[tokio::test]
async fn a_version_2_data_directorys_runs_answer_as_of_an_instant() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture_of("v2", "tributary.db"), dir.path().join("tributary.db")).unwrap();
    let server = Server::start(&["--data-dir", dir.path().to_str().unwrap()], &[]);
    runs_answer_as_of_an_instant(&server, read_json_of("v2", "tokens.json")["admin"].as_str().unwrap()).await;
}

/// The same on a version 1 Neo4j database (the fixture's `experiment` run failed alike).
#[tokio::test]
async fn a_version_1_neo4j_databases_runs_answer_as_of_an_instant() {
    let Some(Neo4jTurn { uri, graph: g, _turn }) = neo4j_turn().await else { return };
    load_version_1(&g).await;
    {
        let server = Server::start(&["--neo4j-uri", &uri], &[]);
        runs_answer_as_of_an_instant(&server, read_json("tokens.json")["admin"].as_str().unwrap()).await;
    }
    connect(&uri).await.unwrap().wipe().await.unwrap();
}

/// See `a_version_2_data_directorys_runs_answer_as_of_an_instant`.
async fn runs_answer_as_of_an_instant(server: &Server, token: &str) {
    let token = token.to_string();
    let now = || chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let job = server.gql(Some(&token), "{ job(namespace: \"etl\", name: \"experiment\") { id } }").await;
    let job = job["data"]["job"]["id"].as_i64().unwrap();
    // (state of DAILY, the job's latest run id and state) as of `t`, or today.
    let at = |t: Option<String>| {
        let (server, token) = (&server, &token);
        async move {
            let as_of = t.map(|t| format!(", asOf: \"{t}\"")).unwrap_or_default();
            let q = format!(
                "{{ jobLineageGraph(jobId: {job}, depth: 1{as_of}) {{
                     nodes {{ id healthAlert }} jobs {{ id latestRun {{ runId state }} }} }} }}"
            );
            let g = server.gql(Some(token), &q).await;
            let g = &g["data"]["jobLineageGraph"];
            let daily = g["nodes"].as_array().unwrap().iter().find(|n| n["id"] == 4).unwrap()["healthAlert"].clone();
            let run = &g["jobs"].as_array().unwrap().iter().find(|j| j["id"] == job).unwrap()["latestRun"];
            (daily, run["runId"].as_str().unwrap().to_string(), run["state"].as_str().unwrap().to_string())
        }
    };
    let failed = (json!("FAILED"), "22222222-2222-4222-8222-222222222222".to_string(), "FAIL".to_string());
    let before = now();
    assert_eq!(at(Some(before.clone())).await, failed);
    assert_eq!(at(None).await, failed);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let rerun = "55555555-5555-4555-8555-555555555555";
    let event = |state: &str| {
        json!({
            "eventType": state, "eventTime": now(), "producer": "https://example.com/fixture",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": rerun}, "job": {"namespace": "etl", "name": "experiment"},
            "inputs": [{"namespace": "s3://landing", "name": "orders_raw"}],
            "outputs": [{"namespace": "snowflake://acct", "name": "ANALYTICS.MART.DAILY"}],
        })
    };
    let r = server.events(&token, json!([event("START"), event("COMPLETE")])).await;
    assert!(r["events"].as_array().unwrap().iter().all(|e| e["status"] != "rejected"), "{r:#}");
    tokio::time::sleep(Duration::from_millis(20)).await;
    let after = now();
    assert_eq!(at(Some(before)).await, failed, "as of before the rerun, nothing changed");
    let fresh = (Value::Null, rerun.to_string(), "COMPLETE".to_string());
    assert_eq!(at(Some(after)).await, fresh);
    assert_eq!(at(None).await, fresh);
}

/// An empty export file in `dir`: what `import` loads to make a new, empty store.
fn empty_export(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let file = dir.path().join("empty.jsonl");
    std::fs::write(&file, "").unwrap();
    file
}

#[test]
fn a_new_data_directory_records_the_current_version() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        tributary(&["import", empty_export(&dir).to_str().unwrap()], &["--data-dir", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(user_version(&dir.path().join("tributary.db")), tributary::store::sqlite::SCHEMA_VERSION);
    assert!(stderr(&out).contains("new store created"), "{}", stderr(&out));
}

/// The refusal names the store, the version found and the newest this binary reads.
fn assert_refused(out: &Output, what: &str, found: i64, current: i64) {
    assert!(!out.status.success(), "a newer store must be refused: {}", stderr(out));
    let expected = format!(
        "{what} was written by a newer Tributary (schema version {found}); this binary reads schema versions up to {current}: upgrade the binary"
    );
    assert!(stderr(out).contains(&expected), "expected {expected:?} in:\n{}", stderr(out));
}

#[test]
fn a_newer_data_directory_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let db = dir.path().join("tributary.db");
    std::fs::copy(fixture("tributary.db"), &db).unwrap();
    let newer = tributary::store::sqlite::SCHEMA_VERSION + 1;
    rusqlite::Connection::open(&db).unwrap().pragma_update(None, "user_version", newer).unwrap();
    let before = std::fs::read(&db).unwrap();
    let what = format!("the data directory {data}");
    let current = tributary::store::sqlite::SCHEMA_VERSION;
    for args in [
        &["serve", "--listen", "127.0.0.1:0"][..],
        &["export"],
        &["replay"],
        &["token", "list"],
        &["backup", "--to", dir.path().join("copy.db").to_str().unwrap()],
    ] {
        let out = tributary(args, &["--data-dir", data]);
        assert_refused(&out, &what, newer, current);
    }
    assert_eq!(user_version(&db), newer);
    assert!(std::fs::read(&db).unwrap() == before, "a refused store is not written to");
    assert!(!dir.path().join("copy.db").exists());
}

// ---- Neo4j ----

static NEO4J: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A test's turn on the suite's one Neo4j database, emptied; `None` when the run skips Neo4j.
struct Neo4jTurn {
    uri: String,
    graph: neo4rs::Graph,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

async fn neo4j_turn() -> Option<Neo4jTurn> {
    let uri = skip_neo4j::neo4j_uri_or_skip()?;
    let turn = NEO4J.lock().await;
    connect(&uri).await.unwrap().wipe().await.unwrap();
    Some(Neo4jTurn { graph: graph(&uri).await, uri, _turn: turn })
}

async fn graph(uri: &str) -> neo4rs::Graph {
    neo4rs::Graph::new(
        uri,
        std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        std::env::var("NEO4J_PASSWORD").unwrap_or_default(),
    )
    .await
    .unwrap()
}

async fn connect(uri: &str) -> Result<Neo4jStore, tributary::store::StoreError> {
    Neo4jStore::connect(
        uri,
        &std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        &std::env::var("NEO4J_PASSWORD").unwrap_or_default(),
        None,
    )
    .await
}

/// The recorded versions (one per `TributarySchema` node, so two would show).
async fn neo4j_versions(g: &neo4rs::Graph) -> Vec<Option<i64>> {
    let mut rows = g.execute(neo4rs::query("MATCH (s:TributarySchema) RETURN s.version AS v")).await.unwrap();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.unwrap() {
        out.push(row.get::<Option<i64>>("v").unwrap());
    }
    out
}

async fn run_cypher(g: &neo4rs::Graph, text: &str) {
    g.run(neo4rs::query(text)).await.unwrap();
}

/// `v` as text with every object's keys sorted: a total order on JSON values, whatever order
/// the database listed properties in.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries.iter().map(|(k, v)| format!("{k:?}:{}", canonical(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Every node (labels, properties) and relationship (type, ends as node positions, properties)
/// of the database, each list in the order of its items' content: `neo4j-graph.json`.
async fn dump_graph(g: &neo4rs::Graph) -> Value {
    let mut rows = g
        .execute(neo4rs::query("MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props"))
        .await
        .unwrap();
    let mut nodes = Vec::new();
    while let Some(row) = rows.next().await.unwrap() {
        let mut labels = row.get::<Vec<String>>("labels").unwrap();
        labels.sort();
        let node = json!({"labels": labels, "props": row.get::<Value>("props").unwrap()});
        nodes.push((canonical(&node), row.get::<String>("id").unwrap(), node));
    }
    nodes.sort_by(|a, b| a.0.cmp(&b.0));
    let position: std::collections::HashMap<String, usize> =
        nodes.iter().enumerate().map(|(i, (_, id, _))| (id.clone(), i)).collect();
    let mut rows = g
        .execute(neo4rs::query(
            "MATCH (a)-[r]->(b) RETURN elementId(a) AS a, elementId(b) AS b, type(r) AS type, properties(r) AS props",
        ))
        .await
        .unwrap();
    let mut relationships = Vec::new();
    while let Some(row) = rows.next().await.unwrap() {
        relationships.push(json!({
            "type": row.get::<String>("type").unwrap(),
            "start": position[&row.get::<String>("a").unwrap()],
            "end": position[&row.get::<String>("b").unwrap()],
            "props": row.get::<Value>("props").unwrap(),
        }));
    }
    relationships.sort_by_key(canonical);
    json!({"nodes": nodes.into_iter().map(|(_, _, n)| n).collect::<Vec<_>>(), "relationships": relationships})
}

/// A label or relationship type from the fixture, checked before it is written into Cypher
/// (labels cannot be parameters).
fn name(text: &str) -> &str {
    assert!(!text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{text:?}");
    text
}

/// Empties the database, version node included, and creates the graph of `neo4j-graph.json`
/// exactly: the database as version 1 wrote it, with no version recorded.
async fn load_version_1(g: &neo4rs::Graph) {
    run_cypher(g, "MATCH (n) DETACH DELETE n").await;
    let dump = read_json("neo4j-graph.json");
    for (i, node) in dump["nodes"].as_array().unwrap().iter().enumerate() {
        let labels: Vec<&str> = node["labels"].as_array().unwrap().iter().map(|l| name(l.as_str().unwrap())).collect();
        let props = neo4rs::BoltType::try_from(node["props"].clone()).unwrap();
        let text = format!("CREATE (n:{}) SET n = $props, n._fixture = $i", labels.join(":"));
        g.run(neo4rs::query(&text).param("props", props).param("i", i as i64)).await.unwrap();
    }
    for r in dump["relationships"].as_array().unwrap() {
        let props = neo4rs::BoltType::try_from(r["props"].clone()).unwrap();
        let text = format!(
            "MATCH (a {{_fixture: $a}}), (b {{_fixture: $b}}) CREATE (a)-[r:{}]->(b) SET r = $props",
            name(r["type"].as_str().unwrap())
        );
        let (a, b) = (r["start"].as_i64().unwrap(), r["end"].as_i64().unwrap());
        g.run(neo4rs::query(&text).param("a", a).param("b", b).param("props", props)).await.unwrap();
    }
    run_cypher(g, "MATCH (n) REMOVE n._fixture").await;
    assert_eq!(dump_graph(g).await, dump, "the loaded graph is the dumped one");
}

/// Makes `neo4j-graph.json` (run by `make_fixture.py` when `NEO4J_URI` is set): the binary of
/// version 1 (`TRIBUTARY_V1`) imports the fixture's export into the emptied test database, and
/// the graph it wrote is dumped.
#[tokio::test]
#[ignore = "makes the fixture; needs TRIBUTARY_V1, the binary of schema version 1"]
async fn make_neo4j_version_1_fixture() {
    let Some(Neo4jTurn { uri, graph: g, _turn }) = neo4j_turn().await else { return };
    let v1 = std::env::var("TRIBUTARY_V1").expect("TRIBUTARY_V1: the binary of schema version 1");
    run_cypher(&g, "MATCH (n) DETACH DELETE n").await;
    let out = Command::new(v1)
        .args(["import", fixture("v1-export.jsonl").to_str().unwrap()])
        .env("NEO4J_URI", &uri)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dump = dump_graph(&g).await;
    std::fs::write(fixture("neo4j-graph.json"), serde_json::to_string_pretty(&dump).unwrap() + "\n").unwrap();
    connect(&uri).await.unwrap().wipe().await.unwrap();
}

#[tokio::test]
async fn a_version_1_neo4j_database_is_migrated_and_answers_as_before() {
    let Some(Neo4jTurn { uri, graph: g, _turn }) = neo4j_turn().await else { return };
    load_version_1(&g).await;
    assert!(neo4j_versions(&g).await.is_empty());
    {
        let server = Server::start(&["--neo4j-uri", &uri], &[]);
        assert_same_answers(&server).await;
        let steps = [("1", "2"), ("2", "3")].map(|(from, to)| (from.to_string(), to.to_string()));
        assert_eq!(migrations_logged(&server.log()), steps, "{}", server.log());
    }
    assert_eq!(neo4j_versions(&g).await, vec![Some(tributary::store::neo4j::SCHEMA_VERSION)]);
    let server = Server::start(&["--neo4j-uri", &uri], &[]);
    assert_same_answers(&server).await;
    assert!(migrations_logged(&server.log()).is_empty(), "{}", server.log());
    drop(server);
    connect(&uri).await.unwrap().wipe().await.unwrap();
}

#[tokio::test]
async fn replicas_starting_together_on_a_version_1_database_migrate_it_once() {
    let Some(Neo4jTurn { uri, graph: g, _turn }) = neo4j_turn().await else { return };
    load_version_1(&g).await;
    let (a, b, c) = tokio::join!(connect(&uri), connect(&uri), connect(&uri));
    for store in [a, b, c] {
        store.expect("every replica starts");
    }
    assert_eq!(neo4j_versions(&g).await, vec![Some(tributary::store::neo4j::SCHEMA_VERSION)], "one version node");
    connect(&uri).await.unwrap().wipe().await.unwrap();
}

#[tokio::test]
async fn a_newer_neo4j_database_is_refused() {
    let Some(Neo4jTurn { uri, graph: g, _turn }) = neo4j_turn().await else { return };
    let current = tributary::store::neo4j::SCHEMA_VERSION;
    let newer = current + 1;
    run_cypher(&g, &format!("MATCH (s:TributarySchema) SET s.version = {newer}")).await;
    let export = tributary(&["export"], &["--neo4j-uri", &uri]);
    let serve = tributary(&["serve", "--listen", "127.0.0.1:0"], &["--neo4j-uri", &uri]);
    let versions = neo4j_versions(&g).await;
    // Put the database back before asserting: the next test must be able to open it.
    run_cypher(&g, &format!("MATCH (s:TributarySchema) SET s.version = {current}")).await;
    assert_eq!(versions, vec![Some(newer)], "a refused database is not written to");
    for out in [&export, &serve] {
        assert_refused(out, "the Neo4j database", newer, current);
    }
}

// ---- backup ----

fn event(i: usize) -> Value {
    json!({
        "eventType": "COMPLETE",
        "eventTime": "2026-11-02T01:00:00Z",
        "producer": "https://example.com/backup-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": format!("00000000-0000-4000-8000-{i:012}")},
        "job": {"namespace": "backup", "name": format!("job_{i}")},
        "inputs": [{"namespace": "postgres://backup.example.com:5432", "name": format!("db.public.src_{}", i % 13)}],
        "outputs": [{"namespace": "postgres://backup.example.com:5432", "name": format!("db.public.dst_{i}")}],
    })
}

/// The run ids of the stored events of the store in `data`, read with `export`.
fn stored_runs(data: &str) -> BTreeSet<String> {
    let out = tributary(&["export"], &["--data-dir", data]);
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["record"] == "event")
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

/// A stored event of about 5 MiB (a long job description), so that a few make the store
/// larger than one backup step (4,096 pages, 16 MiB) and the backup logs its progress midway.
fn bulky_event(k: usize) -> Value {
    let mut e = event(1_000_000 + k);
    e["run"]["runId"] = json!(format!("00000000-0000-4000-9000-{k:012}"));
    e["job"]["facets"] = json!({"documentation": {
        "_producer": "https://example.com/backup-test",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json",
        "description": "x".repeat(5 << 20),
    }});
    e
}

/// `serve` ingests while a backup runs, and the copy holds exactly the events acknowledged
/// before it began and none sent after its snapshot. To make "while" certain, the backup is
/// paused (SIGSTOP) at its first progress line, holding its snapshot mid-copy, until the client
/// has had more events acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_during_ingest_holds_every_event_acknowledged_before_it() {
    use tokio::io::AsyncBufReadExt as _;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_str = data.to_str().unwrap().to_string();
    let server = Server::start(&["--data-dir", &data_str], &["--auth", "off", "--openlineage-zero-setup"]);
    let client = reqwest::Client::new();
    for k in 0..5 {
        let r = client.post(format!("{}/api/v1/lineage", server.url)).json(&bulky_event(k)).send().await.unwrap();
        assert!(r.status().is_success(), "bulky event {k}: {}", r.status());
    }
    // One client sends events one by one and records which were acknowledged, in order.
    let acked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let sender = {
        let (acked, stop, url) = (acked.clone(), stop.clone(), server.url.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) && i < 20_000 {
                let e = event(i);
                let r = client.post(format!("{url}/api/v1/lineage")).json(&e).send().await.unwrap();
                assert!(r.status().is_success(), "event {i}: {}", r.status());
                acked.lock().unwrap().push(e["run"]["runId"].as_str().unwrap().to_string());
                i += 1;
            }
        })
    };
    let wait_for = |n: usize, what: &'static str| {
        let acked = acked.clone();
        async move {
            let started = Instant::now();
            while acked.lock().unwrap().len() < n {
                assert!(started.elapsed() < Duration::from_secs(120), "{what}: fewer than {n} events acknowledged");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    wait_for(200, "before the backup").await;
    let before: Vec<String> = acked.lock().unwrap().clone();
    let copy = dir.path().join("backup.db");
    // Killed if the test fails while it is paused.
    let mut backup = tokio::process::Command::new(BIN)
        .args(["backup", "--to", copy.to_str().unwrap(), "--data-dir", &data_str])
        .env_remove("NEO4J_URI")
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = backup.id().unwrap();
    let signal = |name: &str| {
        let ok = Command::new("kill").args([name, &pid.to_string()]).status().is_ok_and(|s| s.success());
        assert!(ok, "kill {name} {pid}");
    };
    let mut lines = tokio::io::BufReader::new(backup.stderr.take().unwrap()).lines();
    let mut backup_log = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let mid = loop {
        let line = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no backup progress line within 120 s: {backup_log}"))
            .unwrap()
            .unwrap_or_else(|| panic!("the backup ended without a progress line: {backup_log}"));
        backup_log.push_str(&line);
        backup_log.push('\n');
        if line.contains("backup progress") {
            signal("-STOP");
            // Every event acknowledged from here on was sent after the snapshot was taken.
            break acked.lock().unwrap().len();
        }
    };
    wait_for(mid + 20, "while the backup held its snapshot").await;
    signal("-CONT");
    let out = tokio::time::timeout(Duration::from_secs(120), backup.wait_with_output())
        .await
        .expect("the backup ends within 120 s of going on")
        .unwrap();
    while let Ok(Some(line)) = lines.next_line().await {
        backup_log.push_str(&line);
        backup_log.push('\n');
    }
    stop.store(true, Ordering::Relaxed);
    sender.await.unwrap();
    let acked = acked.lock().unwrap().clone();
    assert!(out.status.success(), "{backup_log}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("backed up"), "{}", String::from_utf8_lossy(&out.stdout));
    drop(server);

    let conn = rusqlite::Connection::open(&copy).unwrap();
    // An index is built on this function; checking the index evaluates it.
    tributary::store::sqlite::register_unicode_lower(&conn).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    drop(conn);
    assert_eq!(check, "ok");
    assert_eq!(user_version(&copy), tributary::store::sqlite::SCHEMA_VERSION);
    // Restore: the copy as the store of an empty directory.
    let restored = dir.path().join("restored");
    std::fs::create_dir(&restored).unwrap();
    std::fs::copy(&copy, restored.join("tributary.db")).unwrap();
    let mut runs = stored_runs(restored.to_str().unwrap());
    let bulky = runs.iter().filter(|r| r.starts_with("00000000-0000-4000-9000-")).count();
    assert_eq!(bulky, 5, "the bulky events are in the backup");
    runs.retain(|r| !r.starts_with("00000000-0000-4000-9000-"));
    let missing: Vec<&String> = before.iter().filter(|r| !runs.contains(*r)).collect();
    assert!(missing.is_empty(), "{} acknowledged events missing from the backup: {missing:?}", missing.len());
    // Event `mid` may have been stored before the snapshot and acknowledged after the pause;
    // every later one was sent after the pause, so after the snapshot.
    let after: Vec<&String> = acked[mid + 1..].iter().filter(|r| runs.contains(*r)).collect();
    assert!(after.is_empty(), "events sent after the snapshot are in the backup: {after:?}");
    assert!(runs.len() <= mid + 1, "{} events in the backup, {mid} acknowledged before its snapshot", runs.len());
    // The restored store serves: its lineage is there too.
    let server = Server::start(&["--data-dir", restored.to_str().unwrap()], &["--auth", "off"]);
    let v = server.gql(None, "{ edges { total } }").await;
    assert!(v["data"]["edges"]["total"].as_i64().unwrap() >= before.len() as i64, "{v}");
}

#[test]
fn backup_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let copy = dir.path().join("copy.db");
    // No store in the directory: nothing is created.
    let out = tributary(&["backup", "--to", copy.to_str().unwrap()], &["--data-dir", data]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains(&format!("no embedded store at {}", dir.path().join("tributary.db").display())));
    assert!(!dir.path().join("tributary.db").exists() && !copy.exists());
    // An existing file is never overwritten (a store made by importing nothing).
    assert!(tributary(&["import", empty_export(&dir).to_str().unwrap()], &["--data-dir", data]).status.success());
    std::fs::write(&copy, b"keep me").unwrap();
    let out = tributary(&["backup", "--to", copy.to_str().unwrap()], &["--data-dir", data]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already exists: name a new file"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&copy).unwrap(), b"keep me");
    // A Neo4j store: its own tools, or export. Refused before connecting (nothing listens here).
    let out = tributary(
        &["backup", "--to", dir.path().join("n.db").to_str().unwrap()],
        &["--neo4j-uri", "bolt://127.0.0.1:9"],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("backup copies the embedded store only") && stderr(&out).contains("tributary export"),
        "{}",
        stderr(&out)
    );
}
