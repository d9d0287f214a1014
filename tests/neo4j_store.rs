//! The Neo4j store against a real Neo4j 5 (`NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD`;
//! `scripts/neo4j-start` starts one). Without `NEO4J_URI` the tests that need the server FAIL,
//! unless `TRIBUTARY_SKIP_NEO4J=1` says to skip them on purpose.
//!
//! Community Neo4j has a single user database, so the tests share it: each takes `SERIAL` and
//! wipes the store first.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{Duration, TimeZone, Utc};
use serde_json::json;
use tributary::domain::{
    Container, ContainerInput, ContainerStats, DatastoreInput, Direction, Edge, EdgeFilter, EdgePatch, End, Evidence,
    FieldInput, Id, Interval, NewEdge, PageRequest, Timestamp,
};
use tributary::metrics::store_queries_total;
use tributary::store::neo4j::{Neo4jStore, EDGE_EXISTS};
use tributary::store::{Record, Store, StoreError};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Connects and wipes the store, or `None` when the run opted out of Neo4j tests.
async fn store() -> Option<Neo4jStore> {
    let Ok(uri) = std::env::var("NEO4J_URI") else {
        if std::env::var("TRIBUTARY_SKIP_NEO4J").as_deref() == Ok("1") {
            eprintln!("NEO4J_URI is unset and TRIBUTARY_SKIP_NEO4J=1: skipping a Neo4j test");
            return None;
        }
        panic!(
            "NEO4J_URI is not set: start a server with `eval \"$(scripts/neo4j-start)\"`, \
             or set TRIBUTARY_SKIP_NEO4J=1 to skip the Neo4j tests on purpose"
        );
    };
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".to_string());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".to_string());
    let store = Neo4jStore::connect(&uri, &user, &password, None).await.expect("connect to NEO4J_URI");
    store.wipe().await.expect("wipe");
    Some(store)
}

fn page(page: i64, size: i64) -> PageRequest {
    PageRequest { page, size }
}

fn t(seconds: i64) -> Timestamp {
    Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).single().expect("valid time")
        + Duration::seconds(seconds)
        + Duration::microseconds(123_456)
}

fn datastore_input(name: &str) -> DatastoreInput {
    DatastoreInput {
        name: name.to_string(),
        kind: "postgresql".to_string(),
        store_type: Some("jdbc".to_string()),
        namespaces: vec!["postgres://db:5432".to_string()],
        enrichment_only: false,
    }
}

fn field(name: &str) -> FieldInput {
    FieldInput { name: name.to_string(), ..FieldInput::default() }
}

fn container_input(datastore_id: Id, name: &str, fields: &[&str]) -> ContainerInput {
    ContainerInput {
        datastore_id,
        name: name.to_string(),
        database: Some("db".to_string()),
        schema: Some("public".to_string()),
        fields: fields.iter().map(|f| field(f)).collect(),
        ..ContainerInput::default()
    }
}

fn c(id: Id) -> End {
    End::Container { id }
}

fn f(store_field: &tributary::domain::Field) -> End {
    End::Field { id: store_field.id, container_id: store_field.container_id }
}

fn new_edge(source: End, target: End, source_type: &str) -> NewEdge {
    NewEdge {
        source,
        target,
        description: None,
        source_type: source_type.to_string(),
        operation: None,
        derived: None,
        transformations: None,
        last_asserted_at: None,
    }
}

fn ids<T>(items: &[T], id: impl Fn(&T) -> Id) -> Vec<Id> {
    items.iter().map(id).collect()
}

fn evidence(edge_id: Id, key: &str) -> Evidence {
    Evidence {
        edge_id,
        key: key.to_string(),
        provider: "openlineage".to_string(),
        evidence_type: "run_event".to_string(),
        authorship: "asserted".to_string(),
        source_relation: None,
        observed_at: Some(t(1)),
        first_observed_operation_id: Some(7),
        last_observed_operation_id: None,
        details: Some(json!({"runId": "r-1", "job": {"namespace": "ns", "name": key}})),
        retired_at: None,
    }
}

// ---- cypher/ files ----

/// The names the code loads with `cypher!("...")`.
fn cypher_names_in_code() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![root.join("src/store/neo4j.rs")];
    if let Ok(dir) = std::fs::read_dir(root.join("src/store/neo4j")) {
        sources.extend(dir.filter_map(Result::ok).map(|e| e.path()));
    }
    let mut names = BTreeSet::new();
    for source in sources {
        let text = std::fs::read_to_string(&source).expect("read store source");
        for piece in text.split("cypher!(\"").skip(1) {
            if let Some(name) = piece.split('"').next() {
                names.insert(name.to_string());
            }
        }
    }
    names
}

fn cypher_files() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cypher");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("cypher/ exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cypher"))
        .map(|p| {
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (name, std::fs::read_to_string(&p).expect("read cypher file"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_cypher_file_is_used_by_the_code_and_documents_its_parameters() {
    let files = cypher_files();
    let on_disk: BTreeSet<String> = files.iter().map(|(n, _)| n.clone()).collect();
    let in_code = cypher_names_in_code();
    let unused: Vec<_> = on_disk.difference(&in_code).collect();
    assert!(unused.is_empty(), "cypher/ files no code loads: {unused:?}");
    let missing: Vec<_> = in_code.difference(&on_disk).collect();
    assert!(missing.is_empty(), "statements the code names but cypher/ lacks: {missing:?}");
    for (name, text) in &files {
        assert!(text.starts_with("// Parameters:"), "{name}.cypher must open with a `// Parameters:` comment");
    }
}

#[tokio::test]
async fn every_cypher_statement_passes_explain() {
    let _serial = SERIAL.lock().await;
    let Some(_store) = store().await else { return };
    let uri = std::env::var("NEO4J_URI").expect("NEO4J_URI");
    let graph = neo4rs::Graph::new(
        uri,
        std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".into()),
    )
    .await
    .expect("connect");
    let mut failures = Vec::new();
    for (name, text) in cypher_files() {
        let explain = format!("EXPLAIN\n{text}");
        match graph.execute(neo4rs::query(&explain)).await {
            Ok(mut rows) => {
                if let Err(e) = rows.next().await {
                    failures.push(format!("{name}: {e}"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "statements Neo4j refuses:\n{}", failures.join("\n"));
}

// ---- connection ----

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    let result = Neo4jStore::connect("bolt://127.0.0.1:1", "neo4j", "x", None).await;
    assert!(matches!(result, Err(StoreError::Unavailable(_))), "expected Unavailable, got {:?}", result.err());
}

#[tokio::test]
async fn ping_and_kind() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    store.ping().await.expect("ping");
    assert_eq!(store.kind(), "neo4j");
}

// ---- catalog ----

#[tokio::test]
async fn datastores_upsert_by_name_and_replace_their_attributes() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };

    let pg = store.upsert_datastore(datastore_input("warehouse")).await.expect("create");
    assert_eq!(pg.name, "warehouse");
    assert_eq!(pg.kind, "postgresql");
    assert_eq!(pg.namespaces, vec!["postgres://db:5432".to_string()]);
    let other = store.upsert_datastore(datastore_input("lake")).await.expect("create");
    assert_ne!(pg.id, other.id);

    let updated = store
        .upsert_datastore(DatastoreInput {
            name: "warehouse".into(),
            kind: "snowflake".into(),
            store_type: None,
            namespaces: vec![],
            enrichment_only: true,
        })
        .await
        .expect("update");
    assert_eq!(updated.id, pg.id, "the name is the key");
    assert_eq!(updated.kind, "snowflake");
    assert_eq!(updated.store_type, None);
    assert!(updated.namespaces.is_empty());
    assert!(updated.enrichment_only);

    let listed = store.list_datastores().await.expect("list");
    assert_eq!(listed, vec![updated.clone(), other.clone()]);
    let by_ids = store.datastores_by_ids(&[other.id, pg.id, other.id, 999]).await.expect("by ids");
    assert_eq!(by_ids, vec![updated, other]);
    assert!(store.datastores_by_ids(&[]).await.expect("empty").is_empty());
}

#[tokio::test]
async fn containers_take_defaults_on_create_and_merge_on_update() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let ds = store.upsert_datastore(datastore_input("warehouse")).await.expect("datastore");

    let missing = store.upsert_container(container_input(ds.id + 100, "orders", &[])).await;
    match missing {
        Err(StoreError::NotFound(message)) => {
            assert_eq!(message, format!("Datastore {} not found", ds.id + 100))
        }
        other => panic!("expected NotFound, got {other:?}"),
    }

    let (created, fields) =
        store.upsert_container(container_input(ds.id, "orders", &["id", "amount"])).await.expect("create");
    assert_eq!(created.container_type, "table");
    assert_eq!(created.active_anomaly_count, 0);
    assert_eq!((created.table_type.clone(), created.purpose.clone()), (None, None));
    assert_eq!(created.database.as_deref(), Some("db"));
    assert_eq!(fields.len(), 2);
    for field in &fields {
        assert_eq!(field.container_id, created.id);
        assert_eq!(field.status, "active");
        assert!(!field.is_computed_field);
        assert_eq!(field.active_anomaly_count, 0);
    }
    let amount = fields.iter().find(|f| f.name == "amount").expect("amount").clone();

    // Set some optional attributes, then update with them unset: they keep their values.
    let mut detailed = container_input(ds.id, "orders", &[]);
    detailed.container_type = Some("view".into());
    detailed.purpose = Some("billing".into());
    detailed.active_anomaly_count = Some(3);
    detailed.fields = vec![FieldInput {
        name: "amount".into(),
        data_type: Some("numeric".into()),
        is_computed_field: Some(true),
        ..FieldInput::default()
    }];
    store.upsert_container(detailed).await.expect("detail");

    let mut update = container_input(ds.id, "orders", &[]);
    update.display_name = Some("Orders".into());
    update.fields = vec![
        FieldInput { name: "amount".into(), status: Some("deprecated".into()), ..FieldInput::default() },
        field("customer_id"),
    ];
    let (updated, fields) = store.upsert_container(update).await.expect("update");
    assert_eq!(updated.id, created.id, "same datastore and database.schema.name");
    assert_eq!(updated.container_type, "view");
    assert_eq!(updated.purpose.as_deref(), Some("billing"));
    assert_eq!(updated.active_anomaly_count, 3);
    assert_eq!(updated.display_name.as_deref(), Some("Orders"));
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["amount", "customer_id"], "the listed fields, in input order");
    let all = store.container_fields(created.id, None, page(1, 50)).await.expect("all fields");
    let names: Vec<&str> = all.items.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["id", "amount", "customer_id"], "unlisted fields are kept, ordered by id");
    let amount_now = fields.iter().find(|f| f.name == "amount").expect("amount");
    assert_eq!(amount_now.id, amount.id);
    assert_eq!(amount_now.data_type.as_deref(), Some("numeric"));
    assert!(amount_now.is_computed_field);
    assert_eq!(amount_now.status, "deprecated");

    // Another schema is another container.
    let mut elsewhere = container_input(ds.id, "orders", &[]);
    elsewhere.schema = Some("staging".into());
    let (staging, _) = store.upsert_container(elsewhere).await.expect("staging");
    assert_ne!(staging.id, created.id);

    assert_eq!(
        store.containers_by_ids(&[staging.id, created.id]).await.expect("by ids"),
        vec![updated.clone(), staging.clone()]
    );
    let by_ids = store.fields_by_ids(&ids(&fields, |f| f.id)).await.expect("fields by ids");
    assert_eq!(by_ids, fields);
}

#[tokio::test]
async fn lists_filter_by_name_and_page_by_id() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let a = store.upsert_datastore(datastore_input("a")).await.expect("a");
    let b = store.upsert_datastore(datastore_input("b")).await.expect("b");
    let mut created: Vec<Container> = Vec::new();
    for (ds, name) in [(a.id, "Orders"), (a.id, "order_items"), (b.id, "customers"), (a.id, "ORDERS_2024")] {
        created.push(store.upsert_container(container_input(ds, name, &[])).await.expect("c").0);
    }

    let all = store.list_containers(None, None, page(1, 50)).await.expect("all");
    assert_eq!(all.total, 4);
    assert_eq!(ids(&all.items, |c| c.id), ids(&created, |c| c.id));

    let orders = store.list_containers(None, Some("oRdEr"), page(1, 2)).await.expect("orders");
    assert_eq!(orders.total, 3);
    assert_eq!(orders.pages(), 2);
    assert_eq!(ids(&orders.items, |c| c.id), vec![created[0].id, created[1].id]);
    let second = store.list_containers(None, Some("order"), page(2, 2)).await.expect("page 2");
    assert_eq!(ids(&second.items, |c| c.id), vec![created[3].id]);
    let beyond = store.list_containers(None, Some("order"), page(9, 2)).await.expect("page 9");
    assert!(beyond.items.is_empty());
    assert_eq!(beyond.total, 3);

    let in_b = store.list_containers(Some(b.id), None, page(1, 50)).await.expect("b");
    assert_eq!(ids(&in_b.items, |c| c.id), vec![created[2].id]);
    let none = store.list_containers(Some(b.id), Some("order"), page(1, 50)).await.expect("none");
    assert_eq!((none.total, none.items.len()), (0, 0));

    let (table, _) = store
        .upsert_container(container_input(a.id, "wide", &["Amount", "amount_usd", "id", "note"]))
        .await
        .expect("wide");
    let amounts = store.container_fields(table.id, Some("AMOUNT"), page(1, 1)).await.expect("fields");
    assert_eq!(amounts.total, 2);
    assert_eq!(amounts.items.len(), 1);
    assert_eq!(amounts.items[0].name, "Amount");
    let all_fields = store.container_fields(table.id, None, page(1, 10)).await.expect("all fields");
    assert_eq!(all_fields.total, 4);
}

#[tokio::test]
async fn deleted_containers_and_fields_disappear_and_free_their_names() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let ds = store.upsert_datastore(datastore_input("warehouse")).await.expect("ds");
    let (orders, fields) =
        store.upsert_container(container_input(ds.id, "orders", &["id", "amount"])).await.expect("c");
    let amount = fields.iter().find(|f| f.name == "amount").expect("amount").clone();

    assert!(store.delete_field(amount.id).await.expect("delete field"));
    assert!(!store.delete_field(amount.id).await.expect("again"), "already deleted");
    assert!(store.fields_by_ids(&[amount.id]).await.expect("by id").is_empty());
    let listed = store.container_fields(orders.id, None, page(1, 50)).await.expect("fields");
    assert_eq!(listed.total, 1);
    let (_, fields) =
        store.upsert_container(container_input(ds.id, "orders", &["amount"])).await.expect("re-add amount");
    let new_amount = fields.iter().find(|f| f.name == "amount").expect("amount");
    assert_ne!(new_amount.id, amount.id, "a deleted field's name makes a new field");

    assert!(store.delete_container(orders.id).await.expect("delete container"));
    assert!(!store.delete_container(orders.id).await.expect("again"));
    assert!(store.containers_by_ids(&[orders.id]).await.expect("by id").is_empty());
    assert!(store.fields_by_ids(&ids(&fields, |f| f.id)).await.expect("fields").is_empty());
    assert_eq!(store.list_containers(None, None, page(1, 50)).await.expect("list").total, 0);
    assert!(store.container_stats(&[orders.id]).await.expect("stats").is_empty());
    let (again, again_fields) = store.upsert_container(container_input(ds.id, "orders", &["id"])).await.expect("reuse");
    assert_ne!(again.id, orders.id, "the key is free again");
    let again_all = store.container_fields(again.id, None, page(1, 50)).await.expect("fields");
    assert_eq!(again_all.total, 1, "fields of the deleted container do not come back");

    assert!(store.delete_datastore(ds.id).await.expect("delete datastore"));
    assert!(!store.delete_datastore(ds.id).await.expect("again"));
    assert!(store.list_datastores().await.expect("list").is_empty());
    assert!(store.containers_by_ids(&[again.id]).await.expect("containers").is_empty());
    assert!(store.fields_by_ids(&ids(&again_fields, |f| f.id)).await.expect("fields").is_empty());
    let reborn = store.upsert_datastore(datastore_input("warehouse")).await.expect("name reused");
    assert_ne!(reborn.id, ds.id);
}

// ---- edges ----

struct Catalog {
    /// Three containers a → b → c, with fields `x` and `y` each.
    containers: Vec<Container>,
    fields: Vec<Vec<tributary::domain::Field>>,
}

async fn catalog(store: &Neo4jStore) -> Catalog {
    let ds = store.upsert_datastore(datastore_input("warehouse")).await.expect("ds");
    let mut containers = Vec::new();
    let mut fields = Vec::new();
    for name in ["a", "b", "c"] {
        let (container, fs) = store.upsert_container(container_input(ds.id, name, &["x", "y"])).await.expect("c");
        containers.push(container);
        fields.push(fs);
    }
    Catalog { containers, fields }
}

#[tokio::test]
async fn edges_are_unique_per_source_target_and_type() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b, cc) = (cat.containers[0].id, cat.containers[1].id, cat.containers[2].id);

    let mut detailed = new_edge(c(a), c(b), "openlineage");
    detailed.description = Some("nightly load".into());
    detailed.operation = Some("INSERT_INTO".into());
    detailed.last_asserted_at = Some(t(5) + Duration::nanoseconds(789));
    let mut column = new_edge(f(&cat.fields[0][0]), f(&cat.fields[1][0]), "openlineage");
    column.derived = Some(true);
    column.transformations = Some(json!([{"type": "DIRECT", "subtype": "IDENTITY", "masking": false}]));
    let external = new_edge(End::External { fqn: "s3://bucket/raw".into() }, c(a), "external");

    let created = store
        .create_edges(vec![detailed.clone(), column.clone(), external.clone()], false, t(0))
        .await
        .expect("create");
    assert_eq!(created.len(), 3);
    assert!(created[0].id < created[1].id && created[1].id < created[2].id, "ids in input order");
    let first = &created[0];
    assert_eq!(first.source, c(a));
    assert_eq!(first.target, c(b));
    assert_eq!(first.created, t(0));
    assert_eq!(first.description.as_deref(), Some("nightly load"));
    assert_eq!(first.operation.as_deref(), Some("INSERT_INTO"));
    assert_eq!(first.last_asserted_at, Some(t(5)), "kept to the microsecond");
    assert_eq!(first.retired_at, None);
    assert_eq!(first.intervals, vec![Interval { from: t(0), to: None }]);
    assert_eq!(created[1].source, f(&cat.fields[0][0]), "field ends keep their container");
    assert_eq!(created[1].derived, Some(true));
    assert_eq!(created[1].transformations, column.transformations);
    assert_eq!(created[2].source, End::External { fqn: "s3://bucket/raw".into() });
    assert_eq!(store.edges_by_ids(&ids(&created, |e| e.id)).await.expect("read back"), created);

    // The same (source, target, type) again fails the whole call and creates nothing.
    let fresh = new_edge(c(b), c(cc), "manual");
    match store.create_edges(vec![fresh.clone(), detailed.clone()], false, t(1)).await {
        Err(StoreError::Conflict(message)) => assert_eq!(message, EDGE_EXISTS),
        other => panic!("expected Conflict, got {other:?}"),
    }
    assert!(!store.live_container_edge_exists(b, cc).await.expect("exists"), "rolled back");
    match store.create_edges(vec![fresh.clone(), fresh.clone()], false, t(1)).await {
        Err(StoreError::Conflict(message)) => assert_eq!(message, EDGE_EXISTS),
        other => panic!("expected Conflict for a repeat inside one call, got {other:?}"),
    }
    // ... unless told to skip existing ones.
    let skipped = store
        .create_edges(vec![detailed.clone(), fresh.clone(), fresh.clone()], true, t(1))
        .await
        .expect("skip existing");
    assert_eq!(skipped.len(), 1);
    assert_eq!((skipped[0].source.clone(), skipped[0].target.clone()), (c(b), c(cc)));
    // Another source type between the same ends is another edge.
    let manual = store.create_edges(vec![new_edge(c(a), c(b), "manual")], false, t(2)).await.expect("another type");
    assert_eq!(manual.len(), 1);

    assert!(store.live_container_edge_exists(a, b).await.expect("a->b"));
    assert!(!store.live_container_edge_exists(b, a).await.expect("b->a"));

    match store.create_edges(vec![new_edge(c(a), c(9999), "manual")], false, t(3)).await {
        Err(StoreError::NotFound(message)) => assert_eq!(message, "Container 9999 not found"),
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn update_edge_changes_description_and_type_without_collisions() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b) = (cat.containers[0].id, cat.containers[1].id);
    let mut manual = new_edge(c(a), c(b), "manual");
    manual.description = Some("by hand".into());
    let created =
        store.create_edges(vec![manual, new_edge(c(a), c(b), "inferred")], false, t(0)).await.expect("create");
    let (edge, inferred) = (&created[0], &created[1]);

    let kept = store
        .update_edge(edge.id, EdgePatch { description: None, source_type: None })
        .await
        .expect("noop")
        .expect("found");
    assert_eq!(&kept, edge);
    let cleared = store
        .update_edge(edge.id, EdgePatch { description: Some(None), source_type: None })
        .await
        .expect("clear")
        .expect("found");
    assert_eq!(cleared.description, None);
    let described = store
        .update_edge(edge.id, EdgePatch { description: Some(Some("new".into())), source_type: None })
        .await
        .expect("set")
        .expect("found");
    assert_eq!(described.description.as_deref(), Some("new"));

    match store.update_edge(edge.id, EdgePatch { description: None, source_type: Some("inferred".into()) }).await {
        Err(StoreError::Conflict(message)) => assert_eq!(message, EDGE_EXISTS),
        other => panic!("expected Conflict, got {other:?}"),
    }
    let retyped = store
        .update_edge(edge.id, EdgePatch { description: None, source_type: Some("catalog_import".into()) })
        .await
        .expect("retype")
        .expect("found");
    assert_eq!(retyped.source_type, "catalog_import");
    // The old (source, target, type) is free again, the new one is taken.
    store.create_edges(vec![new_edge(c(a), c(b), "manual")], false, t(1)).await.expect("manual is free");
    assert!(matches!(
        store.create_edges(vec![new_edge(c(a), c(b), "catalog_import")], false, t(1)).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.edges_by_ids(&[inferred.id]).await.expect("untouched")[0], *inferred);
    assert!(store.update_edge(9999, EdgePatch::default()).await.expect("unknown").is_none());
}

#[tokio::test]
async fn retired_edges_stay_readable_but_leave_traversal() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b, cc) = (cat.containers[0].id, cat.containers[1].id, cat.containers[2].id);
    let (ax, bx, cx) = (&cat.fields[0][0], &cat.fields[1][0], &cat.fields[2][0]);
    let by = &cat.fields[1][1];
    let ext = End::External { fqn: "kafka://topic".into() };
    let created = store
        .create_edges(
            vec![
                new_edge(c(a), c(b), "openlineage"),
                new_edge(c(b), c(cc), "openlineage"),
                new_edge(ext.clone(), c(b), "external"),
                new_edge(f(ax), f(bx), "openlineage"),
                new_edge(f(bx), f(cx), "openlineage"),
                new_edge(f(ax), f(by), "manual"),
            ],
            false,
            t(0),
        )
        .await
        .expect("create");
    let [ab, bc, xb, axbx, bxcx, axby] = [0, 1, 2, 3, 4, 5].map(|i| created[i].id);
    store
        .put_evidence(vec![evidence(ab, "job-1"), evidence(ab, "job-2"), evidence(bc, "job-1")])
        .await
        .expect("evidence");

    // Traversal, both directions, before retiring.
    let up = store.container_edges_of(&[b], Direction::Upstream).await.expect("up");
    assert_eq!(ids(&up, |e| e.id), vec![ab, xb], "the external source is included");
    let down = store.container_edges_of(&[a, b], Direction::Downstream).await.expect("down");
    assert_eq!(ids(&down, |e| e.id), vec![ab, bc]);
    let field_down = store.field_edges_of(&[ax.id], Direction::Downstream).await.expect("fd");
    assert_eq!(ids(&field_down, |e| e.id), vec![axbx, axby]);
    let field_up = store.field_edges_of(&[cx.id, bx.id], Direction::Upstream).await.expect("fu");
    assert_eq!(ids(&field_up, |e| e.id), vec![axbx, bxcx]);
    assert!(store.container_edges_of(&[a], Direction::Upstream).await.expect("none").is_empty());

    let stats = store.container_stats(&[a, b, cc, 9999]).await.expect("stats");
    assert_eq!(
        stats,
        vec![
            ContainerStats { container_id: a, field_count: 2, linked_field_count: 1 },
            ContainerStats { container_id: b, field_count: 2, linked_field_count: 2 },
            ContainerStats { container_id: cc, field_count: 2, linked_field_count: 1 },
        ]
    );

    // Retire a->b and the field edge b.x->c.x.
    store.retire_edges(&[ab, bxcx], t(60)).await.expect("retire");
    let retired = store.edges_by_ids(&[ab, bxcx]).await.expect("still there");
    assert_eq!(retired.len(), 2, "retiring keeps the edges");
    for edge in &retired {
        assert_eq!(edge.retired_at, Some(t(60)));
        assert_eq!(edge.intervals, vec![Interval { from: t(0), to: Some(t(60)) }]);
        assert!(!edge.is_live());
    }
    let ev = store.evidence_for_edges(&[ab, bc]).await.expect("evidence");
    assert_eq!(ev.len(), 3);
    for e in &ev {
        let expected = if e.edge_id == ab { Some(t(60)) } else { None };
        assert_eq!(e.retired_at, expected, "evidence of {} {}", e.edge_id, e.key);
    }
    // Retiring again changes nothing.
    store.retire_edges(&[ab], t(120)).await.expect("retire again");
    assert_eq!(store.edges_by_ids(&[ab]).await.expect("ab")[0].retired_at, Some(t(60)));

    let up = store.container_edges_of(&[b], Direction::Upstream).await.expect("up");
    assert_eq!(ids(&up, |e| e.id), vec![xb], "retired edges leave traversal");
    let field_up = store.field_edges_of(&[cx.id], Direction::Upstream).await.expect("fu");
    assert!(field_up.is_empty());
    assert!(!store.live_container_edge_exists(a, b).await.expect("a->b"));
    let stats = store.container_stats(&[cc]).await.expect("stats");
    assert_eq!(stats[0].linked_field_count, 0);
    assert_eq!(store.fields_with_lineage(&[ax.id, bx.id, cx.id, by.id]).await.expect("fwl"), vec![ax.id, bx.id, by.id]);

    // Lists.
    let live = store.list_edges(&EdgeFilter::default(), page(1, 50)).await.expect("live");
    assert_eq!(ids(&live.items, |e| e.id), vec![bc, xb, axbx, axby]);
    let everything = EdgeFilter { include_retired: true, ..EdgeFilter::default() };
    let all = store.list_edges(&everything, page(1, 4)).await.expect("all");
    assert_eq!((all.total, all.items.len()), (6, 4));
    let of_b = EdgeFilter { container_id: Some(b), include_retired: true, ..EdgeFilter::default() };
    let listed = store.list_edges(&of_b, page(1, 50)).await.expect("of b");
    assert_eq!(ids(&listed.items, |e| e.id), vec![ab, bc, xb], "container ends only");
    let manual = EdgeFilter { field_id: Some(ax.id), source_type: Some("manual".into()), ..EdgeFilter::default() };
    let listed = store.list_edges(&manual, page(1, 50)).await.expect("manual of ax");
    assert_eq!(ids(&listed.items, |e| e.id), vec![axby]);

    // What deleting a container or field touches: live and retired, container and field ends.
    let touching = store.edges_touching_containers(&[b]).await.expect("touching b");
    assert_eq!(ids(&touching, |e| e.id), vec![ab, bc, xb, axbx, bxcx, axby]);
    let touching = store.edges_touching_containers(&[cc]).await.expect("touching c");
    assert_eq!(ids(&touching, |e| e.id), vec![bc, bxcx]);
    let touching = store.edges_touching_fields(&[cx.id, by.id]).await.expect("touching fields");
    assert_eq!(ids(&touching, |e| e.id), vec![bxcx, axby]);

    // A deleted container leaves traversal even through an edge that was not retired.
    assert!(store.delete_container(cc).await.expect("delete c"));
    assert!(store.container_edges_of(&[b], Direction::Downstream).await.expect("down").is_empty());
    assert!(store.container_edges_of(&[cc], Direction::Upstream).await.expect("up").is_empty());
    assert_eq!(ids(&store.edges_touching_containers(&[cc]).await.expect("t"), |e| e.id), vec![bc, bxcx]);

    // Deleting removes edges and their evidence.
    store.delete_edges(&[ab, axby]).await.expect("delete");
    assert!(store.edges_by_ids(&[ab, axby]).await.expect("gone").is_empty());
    assert!(store.evidence_for_edges(&[ab]).await.expect("evidence gone").is_empty());
    assert_eq!(store.evidence_for_edges(&[bc]).await.expect("kept").len(), 1);
}

#[tokio::test]
async fn evidence_is_replaced_by_edge_and_key() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let edge = &store
        .create_edges(vec![new_edge(c(cat.containers[0].id), c(cat.containers[1].id), "openlineage")], false, t(0))
        .await
        .expect("edge")[0];
    let first = evidence(edge.id, "job-1");
    store.put_evidence(vec![first.clone()]).await.expect("put");
    assert_eq!(store.evidence_for_edges(&[edge.id]).await.expect("read"), vec![first.clone()]);

    let mut replaced = first.clone();
    replaced.last_observed_operation_id = Some(9);
    replaced.details = None;
    replaced.source_relation = Some("orders".into());
    let other = evidence(edge.id, "job-0");
    store.put_evidence(vec![replaced.clone(), other.clone()]).await.expect("replace");
    assert_eq!(
        store.evidence_for_edges(&[edge.id, edge.id]).await.expect("read"),
        vec![other, replaced],
        "one row per (edge, key), ordered by key; the replaced row drops unset attributes"
    );
}

#[tokio::test]
async fn traversal_costs_one_statement_whatever_the_number_of_ids() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let ds = store.upsert_datastore(datastore_input("warehouse")).await.expect("ds");
    let mut containers = Vec::new();
    let mut fields = Vec::new();
    for i in 0..40 {
        let (container, fs) =
            store.upsert_container(container_input(ds.id, &format!("t{i}"), &["v"])).await.expect("container");
        containers.push(container.id);
        fields.push(fs[0].clone());
    }
    let mut edges = Vec::new();
    for i in 1..containers.len() {
        edges.push(new_edge(c(containers[i - 1]), c(containers[i]), "openlineage"));
        edges.push(new_edge(f(&fields[i - 1]), f(&fields[i]), "openlineage"));
    }
    let before = store_queries_total("neo4j");
    store.create_edges(edges, false, t(0)).await.expect("edges");
    let create_cost = store_queries_total("neo4j") - before;
    assert!(create_cost <= 4, "creating 78 edges took {create_cost} statements");

    for n in [1, 10, 40] {
        let some = &containers[..n];
        let field_ids: Vec<Id> = fields[..n].iter().map(|f| f.id).collect();
        for direction in [Direction::Upstream, Direction::Downstream] {
            // The chain's first n nodes have n - 1 edges into them and min(n, 39) out of them.
            let expected = match direction {
                Direction::Upstream => n - 1,
                Direction::Downstream => n.min(containers.len() - 1),
            };
            let before = store_queries_total("neo4j");
            let found = store.container_edges_of(some, direction).await.expect("containers");
            assert_eq!(store_queries_total("neo4j") - before, 1, "container_edges_of {n} ids");
            assert_eq!(found.len(), expected);
            let before = store_queries_total("neo4j");
            let found = store.field_edges_of(&field_ids, direction).await.expect("fields");
            assert_eq!(store_queries_total("neo4j") - before, 1, "field_edges_of {n} ids");
            assert_eq!(found.len(), expected);
        }
        let before = store_queries_total("neo4j");
        store.container_stats(some).await.expect("stats");
        store.edges_touching_containers(some).await.expect("touching");
        assert_eq!(store_queries_total("neo4j") - before, 2, "batched reads of {n} ids");
    }
}

#[tokio::test]
async fn export_then_import_into_an_empty_store_round_trips() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b, cc) = (cat.containers[0].id, cat.containers[1].id, cat.containers[2].id);
    let mut column = new_edge(f(&cat.fields[1][0]), f(&cat.fields[2][1]), "openlineage");
    column.transformations = Some(json!([{"type": "INDIRECT", "subtype": "FILTER"}]));
    column.derived = Some(false);
    let created = store
        .create_edges(
            vec![
                new_edge(c(a), c(b), "openlineage"),
                new_edge(c(b), c(cc), "postgresql"),
                new_edge(End::External { fqn: "s3://raw".into() }, c(a), "external"),
                column,
            ],
            false,
            t(0),
        )
        .await
        .expect("edges");
    store.put_evidence(vec![evidence(created[0].id, "job"), evidence(created[1].id, "job")]).await.expect("ev");
    // A retired edge whose target container is then deleted must survive the round trip, and
    // the container must stay deleted.
    store.retire_edges(&[created[1].id], t(30)).await.expect("retire");
    assert!(store.delete_container(cc).await.expect("delete"));

    let exported = store.export().await.expect("export");
    let kinds: Vec<&str> = exported
        .iter()
        .map(|r| match r {
            Record::Datastore(_) => "datastore",
            Record::Container(_) => "container",
            Record::Field(_) => "field",
            Record::Edge(_) => "edge",
            Record::Evidence(_) => "evidence",
            Record::Event(_) => "event",
        })
        .collect();
    let mut sorted = kinds.clone();
    sorted.sort_by_key(|k| ["datastore", "container", "field", "edge", "evidence"].iter().position(|x| x == k));
    assert_eq!(kinds, sorted, "records come in replayable order");
    assert_eq!(kinds.iter().filter(|k| **k == "container").count(), 2, "live containers only");
    assert_eq!(kinds.iter().filter(|k| **k == "field").count(), 4, "live fields only");
    assert_eq!(kinds.iter().filter(|k| **k == "edge").count(), 4, "every edge");
    assert_eq!(kinds.iter().filter(|k| **k == "evidence").count(), 2);

    match store.import(exported.clone()).await {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("import into a non-empty store must be Invalid, got {other:?}"),
    }

    store.wipe().await.expect("wipe");
    assert_eq!(store.import(exported.clone()).await.expect("import"), exported.len());
    assert_eq!(store.export().await.expect("export again"), exported);

    // Ids were kept, deleted things stay deleted, and new ids continue past the imported ones.
    assert!(store.containers_by_ids(&[cc]).await.expect("c").is_empty());
    let retired = store.edges_by_ids(&[created[1].id]).await.expect("retired edge");
    assert_eq!(retired[0].target, c(cc));
    assert_eq!(retired[0].retired_at, Some(t(30)));
    let up = store.container_edges_of(&[a], Direction::Upstream).await.expect("up");
    assert_eq!(ids(&up, |e| e.id), vec![created[2].id]);
    let stats = store.container_stats(&[b]).await.expect("stats");
    assert_eq!(stats[0].field_count, 2);
    let ds_id = cat.containers[0].datastore_id;
    let (fresh, fresh_fields) =
        store.upsert_container(container_input(ds_id, "d", &["z"])).await.expect("new container");
    assert!(fresh.id > cc, "container ids continue past the imported ones");
    let max_field = cat.fields.iter().flatten().map(|f| f.id).max().unwrap_or_default();
    assert!(fresh_fields[0].id > max_field);
    let edge = store.create_edges(vec![new_edge(c(a), c(fresh.id), "manual")], false, t(40)).await.expect("edge");
    assert!(edge[0].id > created[3].id);
    let ds = store.upsert_datastore(datastore_input("another")).await.expect("ds");
    assert!(ds.id > ds_id);
    // The container key of the deleted container is free, the live ones are taken.
    let (b_again, _) = store.upsert_container(container_input(ds_id, "b", &[])).await.expect("b");
    assert_eq!(b_again.id, b);
    let (c_again, _) = store.upsert_container(container_input(ds_id, "c", &[])).await.expect("c");
    assert_ne!(c_again.id, cc);

    // An empty store exports nothing.
    store.wipe().await.expect("wipe");
    assert!(store.export().await.expect("empty export").is_empty());
    let edge_only: Vec<Record> = exported.into_iter().filter(|r| matches!(r, Record::Edge(Edge { .. }))).collect();
    store.import(edge_only.clone()).await.expect("edges alone import onto deleted stand-ins");
    assert_eq!(store.export().await.expect("export"), edge_only);
}

#[tokio::test]
async fn concurrent_writers_of_the_same_edge_and_container_do_not_duplicate() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let edge = new_edge(c(cat.containers[0].id), c(cat.containers[2].id), "openlineage");
    for round in 0..5 {
        let at = t(round);
        let (one, two) = tokio::join!(
            store.create_edges(vec![edge.clone()], false, at),
            store.create_edges(vec![edge.clone()], false, at),
        );
        if round == 0 {
            let outcomes = [&one, &two];
            assert_eq!(outcomes.iter().filter(|r| r.is_ok()).count(), 1, "{one:?} / {two:?}");
        }
        for result in [one, two] {
            match result {
                Ok(created) => assert_eq!(created.len(), 1),
                Err(StoreError::Conflict(message)) => assert_eq!(message, EDGE_EXISTS),
                Err(other) => panic!("expected Conflict, got {other:?}"),
            }
        }
    }
    let all = EdgeFilter { include_retired: true, ..EdgeFilter::default() };
    assert_eq!(store.list_edges(&all, page(1, 50)).await.expect("edges").total, 1);

    let ds = cat.containers[0].datastore_id;
    let (one, two) = tokio::join!(
        store.upsert_container(container_input(ds, "same", &["p", "q"])),
        store.upsert_container(container_input(ds, "same", &["q", "r"])),
    );
    let (one, two) = (one.expect("first upsert"), two.expect("second upsert"));
    assert_eq!(one.0.id, two.0.id, "one container per key");
    let fields = store.container_fields(one.0.id, None, page(1, 50)).await.expect("fields");
    let mut names: Vec<String> = fields.items.iter().map(|f| f.name.clone()).collect();
    names.sort();
    assert_eq!(names, vec!["p", "q", "r"], "fields merged by name");
}

#[tokio::test]
async fn a_failed_import_leaves_the_store_empty() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let mut records = store.export().await.expect("export");
    store.wipe().await.expect("wipe");
    // The same container twice: the second violates the key constraint mid-import.
    records.push(Record::Container(cat.containers[0].clone()));
    match store.import(records).await {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(store.export().await.expect("export").is_empty(), "nothing was imported");
    assert!(store.list_datastores().await.expect("datastores").is_empty());
}
