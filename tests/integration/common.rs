//! The shared harness: a `TestApp` runs the real server on port 0 over a fresh store, and the
//! `both_stores!` macro runs every behaviour case once per store.
//!
//! Isolation on Neo4j: Community has one user database, so Neo4j cases run one at a time (a
//! process-wide lock) and wipe the database first. Without `NEO4J_URI` the Neo4j cases fail
//! loudly instead of passing: `scripts/test` starts a real Neo4j and sets it.

#![allow(dead_code)]

use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::{oneshot, Mutex, MutexGuard};
use tributary::store::neo4j::Neo4jStore;
use tributary::store::sqlite::SqliteStore;
use tributary::store::Store;

static NEO4J_LOCK: Mutex<()> = Mutex::const_new(());

pub struct TestApp {
    pub url: String,
    /// The unrestricted admin's API token the suite acts with.
    pub token: String,
    pub store: Arc<dyn Store>,
    client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    _dir: Option<tempfile::TempDir>,
    _guard: Option<MutexGuard<'static, ()>>,
}

pub async fn neo4j_store() -> Neo4jStore {
    let uri = std::env::var("NEO4J_URI").unwrap_or_default();
    assert!(
        !uri.is_empty(),
        "NEO4J_URI is not set: the Neo4j suite needs a real Neo4j. Run `scripts/test`, which starts one."
    );
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_default();
    let database = std::env::var("NEO4J_DATABASE").ok().filter(|d| !d.is_empty());
    Neo4jStore::connect(&uri, &user, &password, database.as_deref()).await.expect("connect to the test Neo4j")
}

impl TestApp {
    pub async fn start(
        store: Arc<dyn Store>,
        dir: Option<tempfile::TempDir>,
        guard: Option<MutexGuard<'static, ()>>,
    ) -> Self {
        Self::start_with(store.clone(), tributary::service::Lineage::new(store), dir, guard).await
    }

    /// The same app with OpenLineage auto-creation on (`--openlineage-auto-create`).
    pub async fn with_auto_create(self) -> Self {
        let lineage = tributary::service::Lineage::new(self.store.clone()).with_auto_create(true);
        self.restart_with(lineage).await
    }

    /// The same app in the OpenLineage zero-setup mode (`--openlineage-zero-setup`).
    pub async fn with_zero_setup(self) -> Self {
        let lineage = tributary::service::Lineage::new(self.store.clone()).with_zero_setup(true);
        self.restart_with(lineage).await
    }

    async fn restart_with(mut self, lineage: tributary::service::Lineage) -> Self {
        let dir = self._dir.take();
        let guard = self._guard.take();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        Self::start_with(self.store.clone(), lineage, dir, guard).await
    }

    /// `store` is the one `lineage` serves: the suite keeps it to set up and inspect what the
    /// service does not offer (the service's own handle on it is private).
    pub async fn start_with(
        store: Arc<dyn Store>,
        lineage: tributary::service::Lineage,
        dir: Option<tempfile::TempDir>,
        guard: Option<MutexGuard<'static, ()>>,
    ) -> Self {
        // Auth is on, as `serve` runs it: the suite acts as an unrestricted admin by default.
        let admin = tributary::auth::Auth::new(store.clone(), true)
            .create_token("test-admin", tributary::auth::Role::Admin, None)
            .await
            .expect("create the admin token");
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {admin}").parse().expect("header value"));
        let client = reqwest::Client::builder().default_headers(headers).build().expect("client");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind port 0");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = tributary::server::run_lineage(listener, lineage, true, &[], async {
                let _ = rx.await;
            })
            .await;
        });
        TestApp { url, token: admin, store, client, shutdown: Some(tx), _dir: dir, _guard: guard }
    }

    pub async fn embedded() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(dir.path()).expect("open embedded store");
        Self::start(Arc::new(store), Some(dir), None).await
    }

    pub async fn neo4j() -> Self {
        let guard = NEO4J_LOCK.lock().await;
        let store = neo4j_store().await;
        store.wipe().await.expect("wipe the test Neo4j");
        Self::start(Arc::new(store), None, Some(guard)).await
    }

    /// The same store, closed and opened again (the embedded store's directory; a new
    /// connection to the same Neo4j database, not wiped) behind a new server: a restart.
    pub async fn reopened(mut self) -> Self {
        let dir = self._dir.take();
        let guard = self._guard.take();
        let kind = self.store.kind();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        drop(self);
        let store: Arc<dyn Store> = match (&dir, kind) {
            (Some(dir), "embedded") => Arc::new(SqliteStore::open(dir.path()).expect("reopen embedded store")),
            _ => Arc::new(neo4j_store().await),
        };
        Self::start(store, dir, guard).await
    }

    /// The embedded store's data directory (none on Neo4j).
    pub fn data_dir(&self) -> Option<std::path::PathBuf> {
        self._dir.as_ref().map(|d| d.path().to_path_buf())
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// A token for another user (created or updated with this role and admin team).
    pub async fn token_for(&self, user: &str, role: &str, team: Option<&str>) -> String {
        let role = tributary::auth::Role::parse(role).expect("role");
        tributary::auth::Auth::new(self.store.clone(), true)
            .create_token(user, role, team.map(str::to_string))
            .await
            .expect("token")
    }

    /// A token for `user`, a MEMBER whose one team (`analysts`) has VIEWER on `datastore` only.
    pub async fn viewer_of(&self, user: &str, datastore: Value) -> String {
        let token = self.token_for(user, "MEMBER", None).await;
        self.ok(
            "mutation($i: TeamInput!) { upsertTeam(input: $i) { name } }",
            json!({"i": {"name": "analysts", "members": [user], "permissions": [{"datastoreId": datastore, "permission": "VIEWER"}]}}),
        )
        .await;
        token
    }

    /// A GraphQL request with the given token (or none).
    pub async fn gql_as(&self, token: Option<&str>, query: &str, variables: Value) -> Value {
        let mut req = reqwest::Client::new()
            .post(format!("{}/graphql", self.url))
            .json(&json!({ "query": query, "variables": variables }));
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        req.send().await.expect("request sent").json().await.expect("JSON response")
    }

    /// A REST POST with the given token (or none): (status, body).
    pub async fn post_as(&self, token: Option<&str>, path: &str, body: &Value) -> (u16, Value) {
        let mut req = reqwest::Client::new().post(format!("{}{path}", self.url)).json(body);
        if let Some(t) = token {
            req = req.header("authorization", format!("Token {t}"));
        }
        let r = req.send().await.expect("sent");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Sends a GraphQL request and returns the whole JSON response.
    pub async fn gql(&self, query: &str, variables: Value) -> Value {
        let resp = self
            .client
            .post(format!("{}/graphql", self.url))
            .json(&json!({ "query": query, "variables": variables }))
            .send()
            .await
            .expect("request sent");
        resp.json().await.expect("JSON response")
    }

    /// The `data` of a request that must succeed.
    pub async fn ok(&self, query: &str, variables: Value) -> Value {
        let v = self.gql(query, variables).await;
        assert!(v.get("errors").is_none_or(|e| e.as_array().is_some_and(|a| a.is_empty())), "unexpected errors: {v:#}");
        v["data"].clone()
    }

    /// The first error's (code, message) of a request that must fail.
    pub async fn err(&self, query: &str, variables: Value) -> (String, String) {
        let v = self.gql(query, variables).await;
        let e = &v["errors"][0];
        assert!(!e.is_null(), "expected an error, got {v:#}");
        (e["extensions"]["code"].as_str().unwrap_or("").to_string(), e["message"].as_str().unwrap_or("").to_string())
    }

    // ---- catalog helpers used by many cases ----

    pub async fn datastore(&self, name: &str, kind: &str) -> i64 {
        let d = self
            .ok(
                "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                json!({"i": {"name": name, "type": kind, "storeType": "jdbc"}}),
            )
            .await;
        d["upsertDatastore"]["id"].as_i64().expect("datastore id")
    }

    /// A container with the given field names; returns (container id, field ids by position).
    pub async fn container(&self, datastore: i64, name: &str, fields: &[&str]) -> (i64, Vec<i64>) {
        let fields: Vec<Value> = fields.iter().map(|f| json!({"name": f, "type": "string"})).collect();
        let d = self
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id fields(size: 1000) { items { id name } } } }",
                json!({"i": {"datastoreId": datastore, "name": name, "fields": fields}}),
            )
            .await;
        let c = &d["upsertContainer"];
        let ids =
            c["fields"]["items"].as_array().expect("fields").iter().map(|f| f["id"].as_i64().expect("id")).collect();
        (c["id"].as_i64().expect("container id"), ids)
    }

    pub async fn edge(&self, source: i64, target: i64) -> i64 {
        let d = self
            .ok(
                "mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t}) { id } }",
                json!({"s": source, "t": target}),
            )
            .await;
        d["createEdge"]["id"].as_i64().expect("edge id")
    }

    pub async fn field_edge(&self, source: i64, target: i64) -> i64 {
        let d = self
            .ok(
                "mutation($s: Int, $t: Int) { createEdge(input: {sourceFieldId: $s, targetFieldId: $t}) { id } }",
                json!({"s": source, "t": target}),
            )
            .await;
        d["createEdge"]["id"].as_i64().expect("edge id")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Sorted ids out of a list of objects.
pub fn ids(v: &Value) -> Vec<i64> {
    let mut out: Vec<i64> =
        v.as_array().map(|a| a.iter().filter_map(|x| x["id"].as_i64()).collect()).unwrap_or_default();
    out.sort();
    out
}

/// Generates one test per case and store: `embedded::case` and `neo4j::case`.
#[macro_export]
macro_rules! both_stores {
    ($($case:ident),* $(,)?) => {
        mod embedded {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::common::TestApp::embedded().await).await
                }
            )*
        }
        mod neo4j {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::common::TestApp::neo4j().await).await
                }
            )*
        }
    };
}
