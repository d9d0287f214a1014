//! No N+1: a lineageGraph of 500 nodes at depth 5, with every node and edge field a client
//! reads, costs a bounded number of store statements (counted by `/metrics`), the same as a
//! graph of 50 nodes. Its own test binary, so no other test's statements are counted.

#![allow(clippy::unwrap_used)]

mod common_bounds {
    use std::sync::Arc;

    use serde_json::{json, Value};
    use tributary::domain::{now, ContainerInput, DatastoreInput, End, FieldInput, NewEdge};
    use tributary::store::Store;

    /// `width` containers per level over `levels` levels upstream of a centre; each container
    /// feeds two of the next level (a lattice full of diamonds). Returns the centre.
    pub async fn lattice(store: &Arc<dyn Store>, width: usize, levels: usize) -> i64 {
        let ds = store
            .upsert_datastore(DatastoreInput { name: "bench".into(), kind: "snowflake".into(), ..Default::default() })
            .await
            .unwrap();
        let mk = |name: String| ContainerInput {
            datastore_id: ds.id,
            name,
            fields: vec![
                FieldInput { name: "id".into(), ..Default::default() },
                FieldInput { name: "v".into(), ..Default::default() },
            ],
            ..Default::default()
        };
        let (centre, centre_fields) = store.upsert_container(mk("centre".into())).await.unwrap();
        let mut prev: Vec<(i64, i64)> = vec![(centre.id, centre_fields[0].id)];
        let mut edges = Vec::new();
        for level in 0..levels {
            let mut cur = Vec::new();
            for i in 0..width {
                let (c, f) = store.upsert_container(mk(format!("l{level}_{i}"))).await.unwrap();
                cur.push((c.id, f[0].id));
            }
            for (i, (c, f)) in cur.iter().enumerate() {
                for j in [i % prev.len(), (i + 1) % prev.len()] {
                    let (pc, pf) = prev[j];
                    edges.push(NewEdge {
                        source: End::Container { id: *c },
                        target: End::Container { id: pc },
                        description: None,
                        source_type: "manual".into(),
                        operation: None,
                        derived: None,
                        transformations: None,
                        last_asserted_at: None,
                    });
                    edges.push(NewEdge {
                        source: End::Field { id: *f, container_id: *c },
                        target: End::Field { id: pf, container_id: pc },
                        description: None,
                        source_type: "manual".into(),
                        operation: None,
                        derived: None,
                        transformations: None,
                        last_asserted_at: None,
                    });
                }
            }
            prev = cur;
        }
        store.create_edges(edges, true, now()).await.unwrap();
        centre.id
    }

    pub async fn statements(client: &reqwest::Client, url: &str, store: &str) -> u64 {
        let text = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
        text.lines()
            .filter(|l| l.starts_with("tributary_store_queries_total{") && l.contains(&format!("store=\"{store}\"")))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    }

    pub const FULL_GRAPH: &str = "query($c: Int!) { lineageGraph(containerId: $c, depth: 5, side: UPSTREAM) {
      nodes { id name displayName containerType tableType datastore { id name type storeType enrichmentOnly } fieldCount linkedFieldCount isTarget activeAnomalyCount purpose hasUpstream hasDownstream }
      edges { id sourceContainerId targetContainerId description sourceType evidence { provider details } sourceContainer { name } targetContainer { name } }
      externalNodes { id } externalEdges { id } } }";

    /// (nodes returned, statements spent) for one full graph query.
    pub async fn measure(client: &reqwest::Client, url: &str, store: &str, centre: i64) -> (usize, u64) {
        let before = statements(client, url, store).await;
        let v: Value = client
            .post(format!("{url}/graphql"))
            .json(&json!({"query": FULL_GRAPH, "variables": {"c": centre}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(v.get("errors").is_none(), "{v}");
        let after = statements(client, url, store).await;
        (v["data"]["lineageGraph"]["nodes"].as_array().unwrap().len(), after - before)
    }
}

use std::sync::Arc;

use common_bounds::*;

/// The statement counter is process-wide: the tests of this binary take turns so none counts
/// another's statements.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
use tributary::store::Store;

async fn serve(store: Arc<dyn Store>) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = tributary::server::run(listener, store, &[], async {
            let _ = rx.await;
        })
        .await;
    });
    (url, tx)
}

/// At most a few statements per depth level, and a constant for the node and edge fields.
const BOUND: u64 = 5 * 2 + 12;

async fn check(small: Arc<dyn Store>, big: Arc<dyn Store>, kind: &str) {
    let small_centre = lattice(&small, 10, 5).await;
    let big_centre = lattice(&big, 100, 5).await;
    let client = reqwest::Client::new();
    let (url_s, _s) = serve(small).await;
    let (url_b, _b) = serve(big).await;
    let (n_small, q_small) = measure(&client, &url_s, kind, small_centre).await;
    let (n_big, q_big) = measure(&client, &url_b, kind, big_centre).await;
    assert_eq!(n_small, 51);
    assert_eq!(n_big, 501);
    assert!(q_big <= BOUND, "{kind}: {q_big} statements for 501 nodes (bound {BOUND})");
    assert_eq!(q_small, q_big, "{kind}: statements must not grow with the number of nodes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lineage_graph_statements_do_not_grow_with_nodes_embedded() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let small = Arc::new(tributary::store::sqlite::SqliteStore::open(d1.path()).unwrap());
    let big = Arc::new(tributary::store::sqlite::SqliteStore::open(d2.path()).unwrap());
    check(small, big, "embedded").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lineage_graph_statements_do_not_grow_with_nodes_neo4j() {
    let _turn = ONE_AT_A_TIME.lock().await;
    // Both graphs live in the one Neo4j database, under different datastore names? No: the
    // generator reuses names, so build the small one, measure, wipe, then the big one.
    let uri = std::env::var("NEO4J_URI").unwrap_or_default();
    assert!(!uri.is_empty(), "NEO4J_URI is not set: run `scripts/test`, which starts a real Neo4j");
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_default();
    let connect = || async {
        let s = tributary::store::neo4j::Neo4jStore::connect(&uri, &user, &password, None).await.unwrap();
        s
    };
    let client = reqwest::Client::new();
    let mut results = Vec::new();
    for width in [10, 100] {
        let store = connect().await;
        store.wipe().await.unwrap();
        let store: Arc<dyn Store> = Arc::new(store);
        let centre = lattice(&store, width, 5).await;
        let (url, _stop) = serve(store).await;
        results.push(measure(&client, &url, "neo4j", centre).await);
    }
    let ((n_small, q_small), (n_big, q_big)) = (results[0], results[1]);
    assert_eq!((n_small, n_big), (51, 501));
    assert!(q_big <= BOUND, "neo4j: {q_big} statements for 501 nodes (bound {BOUND})");
    assert_eq!(q_small, q_big, "neo4j: statements must not grow with the number of nodes");
    // Evidence and its permission check, on the same database, one size after the other.
    let mut costs = Vec::new();
    for edges in [50, 500] {
        let store = connect().await;
        store.wipe().await.unwrap();
        costs.push(evidence_cost(Arc::new(store), edges, "neo4j").await);
    }
    assert!(costs[1] <= 12, "neo4j: {} statements for evidence of 500 edges", costs[1]);
    assert_eq!(costs[0], costs[1], "neo4j: evidence statements must not grow with the number of edges");
    connect().await.wipe().await.unwrap();
}

/// Evidence and its VIEWER check for a page of edges: the same number of statements for 50
/// edges as for 500, with auth on and a caller who is not an unrestricted admin.
async fn evidence_cost(store: Arc<dyn Store>, edges: usize, kind: &str) -> u64 {
    use tributary::auth::{Auth, Caller, Permission, Role, Team, TeamPermission};
    use tributary::domain::Evidence;
    let centre = lattice(&store, edges / 10, 5).await;
    let _ = centre;
    let all = store
        .list_edges(&tributary::domain::EdgeFilter::default(), tributary::domain::PageRequest { page: 1, size: 1000 })
        .await
        .unwrap();
    let evidence: Vec<Evidence> = all
        .items
        .iter()
        .map(|e| Evidence {
            edge_id: e.id,
            key: "job".into(),
            provider: "https://example.com/producer".into(),
            evidence_type: "run_event".into(),
            authorship: "asserted".into(),
            source_relation: Some("[\"ns\",\"job\"]".into()),
            observed_at: None,
            first_observed_operation_id: None,
            last_observed_operation_id: None,
            details: Some(serde_json::json!({"runId": "r"})),
            retired_at: None,
        })
        .collect();
    store.put_evidence(evidence).await.unwrap();
    let auth = Auth::new(store.clone(), true);
    let token = auth.create_token("viewer", Role::Member, None).await.unwrap();
    let ds = store.list_datastores().await.unwrap()[0].id;
    auth.upsert_team(
        &Caller::system(),
        Team {
            name: "viewers".into(),
            members: vec!["viewer".into()],
            permissions: vec![TeamPermission { datastore_id: ds, permission: Permission::Viewer }],
        },
    )
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let lineage = tributary::service::Lineage::new(store);
    tokio::spawn(async move {
        let _ = tributary::server::run_lineage(listener, lineage, true, &[], std::future::pending()).await;
    });
    let client = reqwest::Client::new();
    let before = statements(&client, &url, kind).await;
    let v: serde_json::Value = client
        .post(format!("{url}/graphql"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"query": "{ edges(size: 1000) { items { id evidence { provider sourceRelation details } sourceContainer { name } targetContainer { name } } } }"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v.get("errors").is_none(), "{v}");
    let items = v["data"]["edges"]["items"].as_array().unwrap();
    assert!(items.len() >= edges, "{} edges", items.len());
    assert!(items.iter().all(|e| e["evidence"][0]["details"]["runId"] == "r"), "VIEWER sees the details");
    statements(&client, &url, kind).await - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_and_its_permission_check_cost_a_bounded_number_of_statements_embedded() {
    let _turn = ONE_AT_A_TIME.lock().await;
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let small =
        evidence_cost(Arc::new(tributary::store::sqlite::SqliteStore::open(d1.path()).unwrap()), 50, "embedded").await;
    let big =
        evidence_cost(Arc::new(tributary::store::sqlite::SqliteStore::open(d2.path()).unwrap()), 500, "embedded").await;
    assert!(big <= 12, "{big} statements");
    assert_eq!(small, big, "statements must not grow with the number of edges");
}
