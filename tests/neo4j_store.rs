//! The Neo4j store against a real Neo4j 5 (`NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD`;
//! `scripts/neo4j-start` starts one). Without `NEO4J_URI` the tests that need the server FAIL,
//! unless `TRIBUTARY_SKIP_NEO4J=1` says to skip them on purpose.
//!
//! Community Neo4j has a single user database, so the tests share it: each takes `SERIAL` and
//! wipes the store first.

#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::collections::BTreeSet;
use std::path::Path;

use chrono::{Duration, TimeZone, Utc};
use serde_json::json;
use tributary::domain::{
    Assertion, AssertionBatch, AssertionSummary, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput,
    Direction, Edge, EdgeFilter, EdgePatch, End, EventFilter, Evidence, FieldInput, Id, Interval, IoDirection, IoEntry,
    Job, JobFilter, JobName, JobUpsert, MetadataAssertion, NewEdge, PageRequest, Run, RunFilter, RunRecord, RunState,
    RunUpsert, StoredEvent, Timestamp,
};
use tributary::metrics::{store_queries_of, store_queries_total};
use tributary::store::neo4j::{Neo4jStore, EDGE_EXISTS};
use tributary::store::sqlite::SqliteStore;
use tributary::store::{Record, Store, StoreError};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A second connection to the test Neo4j (as another process would open), without wiping.
async fn connect_again() -> Neo4jStore {
    let uri = std::env::var("NEO4J_URI").expect("NEO4J_URI");
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".to_string());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".to_string());
    Neo4jStore::connect(&uri, &user, &password, None).await.expect("a second connection")
}

/// Connects and wipes the store, or `None` when the run opted out of Neo4j tests.
async fn store() -> Option<Neo4jStore> {
    let uri = skip_neo4j::neo4j_uri_or_skip()?;
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
    // Every file under src/store/neo4j/, its submodules' directories (jobs/) included.
    let mut dirs = vec![root.join("src/store/neo4j")];
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(dir).expect("read a store directory").filter_map(Result::ok).map(|e| e.path()) {
            match path.is_dir() {
                true => dirs.push(path),
                false => sources.push(path),
            }
        }
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

async fn catalog(store: &impl Store) -> Catalog {
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
    // Ukeys, ends, ids, the edges, and their changes in the change log.
    assert!(create_cost <= 5, "creating 78 edges took {create_cost} statements");

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
            Record::Metadata(_) => "metadata",
            Record::Doc { .. } => "doc",
            Record::Job(_) => "job",
            Record::Run(_) => "run",
            Record::JobIo { .. } => "job_io",
            Record::RunIo { .. } => "run_io",
        })
        .collect();
    let mut sorted = kinds.clone();
    sorted.sort_by_key(|k| {
        ["datastore", "container", "field", "edge", "evidence", "metadata", "event", "job", "run", "job_io", "run_io"]
            .iter()
            .position(|x| x == k)
    });
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

#[tokio::test]
async fn a_large_import_commits_in_parts_and_a_late_failure_still_leaves_the_store_empty() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    store.wipe().await.expect("wipe");
    let ds = Datastore {
        id: 1,
        name: "big".into(),
        kind: "snowflake".into(),
        store_type: None,
        namespaces: vec![],
        enrichment_only: false,
    };
    let container = |id: i64| Container {
        id,
        datastore_id: 1,
        name: format!("t{id}"),
        database: None,
        schema: None,
        container_type: "table".into(),
        table_type: None,
        display_name: None,
        purpose: None,
        active_anomaly_count: 0,
    };
    // More rows than one import transaction holds: the import commits in parts.
    let mut records = vec![Record::Datastore(ds)];
    records.extend((1..=12_000).map(|id| Record::Container(container(id))));
    let good = records.clone();
    // A repeated id at the very end fails the last part, after the first was committed.
    records.push(Record::Container(container(1)));
    match store.import(records).await {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(store.export().await.expect("export").is_empty(), "the committed part was undone");
    assert_eq!(store.import(good).await.expect("import"), 12_001);
    let page = store.list_containers(Some(1), None, PageRequest { page: 1, size: 1 }).await.expect("list");
    assert_eq!(page.total, 12_000);
}

// ---- provider assertions ----

fn x(fqn: &str) -> End {
    End::External { fqn: fqn.to_string() }
}

fn assertion(source: End, target: End, source_type: &str, key: &str) -> Assertion {
    Assertion { edge: new_edge(source, target, source_type), evidence: evidence(0, key) }
}

fn asserting(assert: Vec<Assertion>) -> AssertionBatch {
    AssertionBatch { assert, ..AssertionBatch::default() }
}

/// Created, revived, asserted edges; created and retired evidence; retired edges.
fn summary(counts: [i64; 6]) -> AssertionSummary {
    let [edges_created, edges_revived, edges_asserted, evidence_created, evidence_retired, edges_retired] = counts;
    AssertionSummary { edges_created, edges_revived, edges_asserted, evidence_created, evidence_retired, edges_retired }
}

async fn all_edges(store: &impl Store) -> Vec<Edge> {
    let everything = EdgeFilter { include_retired: true, ..EdgeFilter::default() };
    store.list_edges(&everything, page(1, 1000)).await.expect("all edges").items
}

fn find(edges: &[Edge], source: &End, target: &End, source_type: &str) -> Edge {
    edges
        .iter()
        .find(|e| &e.source == source && &e.target == target && e.source_type == source_type)
        .cloned()
        .unwrap_or_else(|| panic!("no {source_type} edge {source:?} -> {target:?}"))
}

/// (edge id, key, retired_at) of evidence rows.
fn evidence_state(rows: &[Evidence]) -> Vec<(Id, String, Option<Timestamp>)> {
    rows.iter().map(|e| (e.edge_id, e.key.clone(), e.retired_at)).collect()
}

#[tokio::test]
async fn assertions_create_revive_and_retire_edges_with_their_intervals() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b) = (c(cat.containers[0].id), c(cat.containers[1].id));
    let (ax, bx) = (f(&cat.fields[0][0]), f(&cat.fields[1][0]));
    let raw = x("s3://bucket/raw");

    // Three new edges; a -> b is asserted twice (by two jobs): created by the first assertion,
    // asserted again by the second.
    let mut first = assertion(a.clone(), b.clone(), "openlineage", "job-1");
    first.edge.description = Some("nightly".into());
    first.edge.operation = Some("INSERT".into());
    first.edge.last_asserted_at = Some(t(5));
    let mut again = assertion(a.clone(), b.clone(), "openlineage", "job-2");
    again.edge.operation = Some("UPDATE".into());
    again.edge.derived = Some(true);
    again.edge.last_asserted_at = Some(t(3));
    let mut column = assertion(ax.clone(), bx.clone(), "openlineage", "job-1");
    column.edge.transformations = Some(json!([{"type": "DIRECT", "subtype": "IDENTITY"}]));
    let from_raw = assertion(raw.clone(), a.clone(), "openlineage", "job-1");
    let sum = store.apply_assertions(asserting(vec![first, column, from_raw, again]), t(0)).await.expect("batch 1");
    assert_eq!(sum, summary([3, 0, 4, 4, 0, 0]));

    let edges = all_edges(&store).await;
    assert_eq!(edges.len(), 3);
    let ab = find(&edges, &a, &b, "openlineage");
    let axbx = find(&edges, &ax, &bx, "openlineage");
    let rawa = find(&edges, &raw, &a, "openlineage");
    assert!(ab.id < axbx.id && axbx.id < rawa.id, "new edges get ids in batch order");
    assert_eq!(ab.created, t(0));
    assert_eq!(ab.retired_at, None);
    assert_eq!(ab.intervals, vec![Interval { from: t(0), to: None }]);
    assert_eq!(ab.description.as_deref(), Some("nightly"));
    assert_eq!(ab.operation.as_deref(), Some("INSERT"), "an operation once set is kept");
    assert_eq!(ab.derived, Some(true), "derived is replaced when an assertion gives it");
    assert_eq!(ab.last_asserted_at, Some(t(5)), "last_asserted_at only moves forward");
    assert_eq!(axbx.transformations, Some(json!([{"type": "DIRECT", "subtype": "IDENTITY"}])));
    assert_eq!(axbx.last_asserted_at, None);
    let ev = store.evidence_for_edges(&[ab.id, axbx.id, rawa.id]).await.expect("evidence");
    assert_eq!(
        evidence_state(&ev),
        vec![
            (ab.id, "job-1".to_string(), None),
            (ab.id, "job-2".to_string(), None),
            (axbx.id, "job-1".to_string(), None),
            (rawa.id, "job-1".to_string(), None),
        ]
    );
    assert_eq!(ev[0], evidence(ab.id, "job-1"), "the evidence is stored as asserted");

    // a -> b loses both jobs and a.x -> b.x its only one: both retire; raw -> a keeps its job.
    // Repeats, unknown evidence and unknown candidates change nothing.
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![],
        retire_evidence: vec![
            (ab.id, "job-1".into()),
            (ab.id, "job-2".into()),
            (axbx.id, "job-1".into()),
            (ab.id, "job-1".into()),
            (9999, "job-1".into()),
        ],
        retire_candidates: vec![ab.id, axbx.id, rawa.id, ab.id, 9999],
    };
    assert_eq!(store.apply_assertions(batch, t(10)).await.expect("batch 2"), summary([0, 0, 0, 0, 3, 2]));
    for retired in store.edges_by_ids(&[ab.id, axbx.id]).await.expect("retired") {
        assert_eq!(retired.retired_at, Some(t(10)));
        assert_eq!(retired.intervals, vec![Interval { from: t(0), to: Some(t(10)) }]);
    }
    assert_eq!(store.edges_by_ids(&[rawa.id]).await.expect("live")[0], rawa, "still backed: untouched");
    let ev = store.evidence_for_edges(&[ab.id, axbx.id, rawa.id]).await.expect("evidence");
    assert_eq!(
        evidence_state(&ev),
        vec![
            (ab.id, "job-1".to_string(), Some(t(10))),
            (ab.id, "job-2".to_string(), Some(t(10))),
            (axbx.id, "job-1".to_string(), Some(t(10))),
            (rawa.id, "job-1".to_string(), None),
        ]
    );
    assert!(store.container_edges_of(&[cat.containers[1].id], Direction::Upstream).await.expect("up").is_empty());

    // Asserted again, a -> b is revived with a new interval; its evidence row is live again. A
    // retired candidate stays as it is.
    let mut revive = assertion(a.clone(), b.clone(), "openlineage", "job-1");
    revive.edge.operation = Some("MERGE".into());
    revive.edge.last_asserted_at = Some(t(1));
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![revive],
        retire_evidence: vec![],
        retire_candidates: vec![axbx.id],
    };
    assert_eq!(store.apply_assertions(batch, t(20)).await.expect("batch 3"), summary([0, 1, 1, 1, 0, 0]));
    let revived = &store.edges_by_ids(&[ab.id]).await.expect("ab")[0];
    assert_eq!(revived.retired_at, None);
    assert_eq!(revived.intervals, vec![Interval { from: t(0), to: Some(t(10)) }, Interval { from: t(20), to: None }]);
    assert_eq!(revived.created, t(0));
    assert_eq!(revived.operation.as_deref(), Some("INSERT"));
    assert_eq!(revived.derived, Some(true), "an assertion without derived keeps it");
    assert_eq!(revived.last_asserted_at, Some(t(5)));
    let ev = store.evidence_for_edges(&[ab.id]).await.expect("evidence");
    assert_eq!(
        evidence_state(&ev),
        vec![(ab.id, "job-1".to_string(), None), (ab.id, "job-2".to_string(), Some(t(10)))]
    );
    assert_eq!(store.edges_by_ids(&[axbx.id]).await.expect("axbx")[0].retired_at, Some(t(10)));

    // A live edge asserted again with live evidence: nothing is created or revived.
    let sum = store.apply_assertions(asserting(vec![assertion(a.clone(), b.clone(), "openlineage", "job-1")]), t(30));
    assert_eq!(sum.await.expect("batch 4"), summary([0, 0, 1, 0, 0, 0]));
    assert_eq!(store.edges_by_ids(&[ab.id]).await.expect("ab")[0].intervals.len(), 2);

    // A missing container or field end fails the whole batch: nothing changes.
    let before = all_edges(&store).await;
    let before_evidence = store.evidence_for_edges(&[ab.id, axbx.id, rawa.id]).await.expect("evidence");
    let cc = c(cat.containers[2].id);
    for (missing, message) in [
        (c(9999), "Container 9999 not found"),
        (End::Field { id: 8888, container_id: cat.containers[0].id }, "Field 8888 not found"),
    ] {
        let batch = AssertionBatch {
            metadata: vec![],
            assert: vec![
                assertion(b.clone(), cc.clone(), "openlineage", "job-9"),
                assertion(a.clone(), b.clone(), "openlineage", "job-9"),
                assertion(a.clone(), missing, "openlineage", "job-9"),
            ],
            retire_evidence: vec![(rawa.id, "job-1".into())],
            retire_candidates: vec![rawa.id],
        };
        match store.apply_assertions(batch, t(40)).await {
            Err(StoreError::NotFound(m)) => assert_eq!(m, message),
            other => panic!("expected NotFound, got {other:?}"),
        }
    }
    assert_eq!(all_edges(&store).await, before, "a failed batch changes no edge");
    assert_eq!(
        store.evidence_for_edges(&[ab.id, axbx.id, rawa.id]).await.expect("evidence"),
        before_evidence,
        "nor any evidence"
    );
}

#[tokio::test]
async fn an_edge_stays_live_while_evidence_of_another_key_backs_it() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b, cc) = (c(cat.containers[0].id), c(cat.containers[1].id), c(cat.containers[2].id));
    let (ax, by, bx, cx) = (f(&cat.fields[0][0]), f(&cat.fields[1][1]), f(&cat.fields[1][0]), f(&cat.fields[2][0]));
    let raw = x("s3://raw");
    let batch = asserting(vec![
        assertion(a.clone(), b.clone(), "openlineage", "job-1"),
        assertion(a.clone(), b.clone(), "openlineage", "job-2"),
        assertion(bx.clone(), cx.clone(), "openlineage", "job-1"),
        assertion(raw.clone(), a.clone(), "openlineage", "job-2"),
        assertion(ax.clone(), by.clone(), "openlineage", "job-3"),
        assertion(raw.clone(), cc.clone(), "openlineage", "job-3"),
    ]);
    assert_eq!(store.apply_assertions(batch, t(0)).await.expect("assert"), summary([5, 0, 6, 6, 0, 0]));
    let edges = all_edges(&store).await;
    let ab = find(&edges, &a, &b, "openlineage");
    let bxcx = find(&edges, &bx, &cx, "openlineage");
    let rawa = find(&edges, &raw, &a, "openlineage");
    let axby = find(&edges, &ax, &by, "openlineage");
    let rawc = find(&edges, &raw, &cc, "openlineage");

    // job-1 stops asserting a -> b; job-2 still does.
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![],
        retire_evidence: vec![(ab.id, "job-1".into())],
        retire_candidates: vec![ab.id],
    };
    assert_eq!(store.apply_assertions(batch, t(10)).await.expect("retire job-1"), summary([0, 0, 0, 0, 1, 0]));
    assert_eq!(store.edges_by_ids(&[ab.id]).await.expect("ab")[0], ab, "still live, interval still open");

    let by_key = store.evidence_by_keys(&["job-1".into(), "job-1".into(), "nobody".into()]).await.expect("by keys");
    assert_eq!(
        evidence_state(&by_key),
        vec![(ab.id, "job-1".to_string(), Some(t(10))), (bxcx.id, "job-1".to_string(), None)],
        "live and retired rows, each once"
    );
    let by_keys = store.evidence_by_keys(&["job-2".into(), "job-1".into()]).await.expect("by keys");
    assert_eq!(
        evidence_state(&by_keys),
        vec![
            (ab.id, "job-1".to_string(), Some(t(10))),
            (ab.id, "job-2".to_string(), None),
            (bxcx.id, "job-1".to_string(), None),
            (rawa.id, "job-2".to_string(), None),
        ],
        "ordered by edge id, then key"
    );
    assert!(store.evidence_by_keys(&[]).await.expect("none").is_empty());

    // Now job-2 stops too: the edge retires.
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![],
        retire_evidence: vec![(ab.id, "job-2".into())],
        retire_candidates: vec![ab.id],
    };
    assert_eq!(store.apply_assertions(batch, t(20)).await.expect("retire job-2"), summary([0, 0, 0, 0, 1, 1]));
    let retired = &store.edges_by_ids(&[ab.id]).await.expect("ab")[0];
    assert_eq!(retired.retired_at, Some(t(20)));
    assert_eq!(retired.intervals, vec![Interval { from: t(0), to: Some(t(20)) }]);

    // Live edges of a source type touching given ends: a container end is the container itself,
    // not its fields; retired edges and other source types are left out.
    let touching = |ends: Vec<End>, source_type: &'static str| {
        let store = &store;
        async move { ids(&store.live_edges_touching_ends(&ends, source_type).await.expect("touching"), |e| e.id) }
    };
    assert_eq!(touching(vec![a.clone()], "openlineage").await, vec![rawa.id]);
    assert_eq!(touching(vec![ax.clone()], "openlineage").await, vec![axby.id]);
    assert_eq!(touching(vec![raw.clone()], "openlineage").await, vec![rawa.id, rawc.id]);
    assert_eq!(
        touching(vec![raw.clone(), a.clone(), cx.clone()], "openlineage").await,
        vec![bxcx.id, rawa.id, rawc.id]
    );
    assert_eq!(touching(vec![b.clone(), cc.clone()], "openlineage").await, vec![rawc.id]);
    assert!(touching(vec![raw.clone()], "manual").await.is_empty());
    assert!(touching(vec![x("s3://elsewhere")], "openlineage").await.is_empty());
    assert!(touching(vec![], "openlineage").await.is_empty());
}

#[tokio::test]
async fn assertion_batches_cost_the_same_statements_whatever_their_size() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let a = c(cat.containers[0].id);
    let store = &store;
    // Statements of the batch itself: a block of ids reserved now and then (see the store's
    // `ids`) serves many batches, whatever their size, so it is not counted.
    let statements = || store_queries_total("neo4j") - store_queries_of("neo4j", "allocate_ids");
    let cost = |batch: AssertionBatch, now: Timestamp| async move {
        let before = statements();
        let sum = store.apply_assertions(batch, now).await.expect("apply");
        (statements() - before, sum)
    };
    let mut costs = Vec::new();
    for n in [1_i64, 50] {
        let prefix = format!("s3://batch-{n}");
        let sources: Vec<End> = (0..n).map(|i| x(&format!("{prefix}/old/{i}"))).collect();
        let assert_all =
            |key: &str| sources.iter().map(|s| assertion(s.clone(), a.clone(), "openlineage", key)).collect();

        // Create n edges.
        let (created_cost, sum) = cost(asserting(assert_all("job")), t(0)).await;
        assert_eq!(sum, summary([n, 0, n, n, 0, 0]));
        let edge_ids: Vec<Id> = all_edges(store)
            .await
            .into_iter()
            .filter(|e| e.source.external_fqn().is_some_and(|fqn| fqn.starts_with(&prefix)))
            .map(|e| e.id)
            .collect();
        assert_eq!(edge_ids.len(), n as usize);

        // Retire them all.
        let batch = AssertionBatch {
            metadata: vec![],
            assert: vec![],
            retire_evidence: edge_ids.iter().map(|id| (*id, "job".to_string())).collect(),
            retire_candidates: edge_ids.clone(),
        };
        let (retire_cost, sum) = cost(batch, t(10)).await;
        assert_eq!(sum, summary([0, 0, 0, 0, n, n]));

        // Revive them under another key, create n more, retire the old evidence again and offer
        // the revived edges as candidates (they stay: the new key backs them).
        let mut assert: Vec<Assertion> = assert_all("job-2");
        assert.extend((0..n).map(|i| assertion(x(&format!("{prefix}/new/{i}")), a.clone(), "openlineage", "job-2")));
        let batch = AssertionBatch {
            metadata: vec![],
            assert,
            retire_evidence: edge_ids.iter().map(|id| (*id, "job".to_string())).collect(),
            retire_candidates: edge_ids.clone(),
        };
        let (mixed_cost, sum) = cost(batch, t(20)).await;
        assert_eq!(sum, summary([n, n, 2 * n, 2 * n, 0, 0]));
        costs.push((created_cost, retire_cost, mixed_cost));
    }
    assert_eq!(costs[0], costs[1], "1 and 50 assertions per batch: the same statements");
    // Create: lookup, create edges with their evidence (their ids taken in the same statement).
    // Mixed: the same, plus the asserted edges' update with their evidence's upsert, then the two
    // retirements. Each ends with the one statement that records its changes in the change log.
    assert_eq!(costs[0], (3, 4, 6), "(create, retire, mixed) statement counts");
}

// ---- metadata assertions ----

/// One source's value of an attribute, asserted and observed at `at`.
fn meta(
    container_id: Id,
    field_id: Option<Id>,
    attribute: &str,
    source: &str,
    value: serde_json::Value,
    at: Timestamp,
) -> MetadataAssertion {
    MetadataAssertion {
        container_id,
        field_id,
        attribute: attribute.to_string(),
        source: source.to_string(),
        provider: format!("{source}-provider"),
        value,
        asserted_at: at,
        observed_at: at,
        details: Some(json!({"event_id": 1, "dataset": {"namespace": "ns", "name": attribute}})),
    }
}

/// (attribute, source, value, asserted_at, observed_at) of metadata rows.
fn metadata_state(rows: &[MetadataAssertion]) -> Vec<(String, String, serde_json::Value, Timestamp, Timestamp)> {
    rows.iter()
        .map(|m| (m.attribute.clone(), m.source.clone(), m.value.clone(), m.asserted_at, m.observed_at))
        .collect()
}

/// Puts the rows into both stores and checks both then hold the same metadata for `containers`.
async fn put_both(neo: &Neo4jStore, lite: &SqliteStore, rows: Vec<MetadataAssertion>, containers: &[Id]) {
    neo.put_metadata(rows.clone()).await.expect("neo4j put_metadata");
    lite.put_metadata(rows).await.expect("embedded put_metadata");
    for id in containers {
        assert_eq!(
            neo.metadata_for_container(*id).await.expect("neo4j metadata"),
            lite.metadata_for_container(*id).await.expect("embedded metadata"),
            "metadata of container {id}"
        );
    }
}

#[tokio::test]
async fn metadata_upserts_move_asserted_at_only_when_the_value_changes() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let lite = SqliteStore::open(dir.path()).expect("embedded store");
    let cat = catalog(&neo).await;
    catalog(&lite).await;
    let (a, b) = (cat.containers[0].id, cat.containers[1].id);
    let (ax, ay) = (cat.fields[0][0].id, cat.fields[0][1].id);
    let both = [a, b, 987_654];

    // New rows, unordered, container- and field-level, a null value, two sources of one attribute.
    let rows = vec![
        meta(a, Some(ay), "type", "openlineage", json!("INT"), t(0)),
        meta(a, None, "tags", "openlineage", json!([{"key": "pii", "value": "true"}]), t(0)),
        MetadataAssertion { details: None, ..meta(a, None, "description", "user", json!("Mine"), t(0)) },
        meta(a, Some(ax), "type", "openlineage", json!("DECIMAL(10,2)"), t(0)),
        meta(b, None, "description", "openlineage", json!("Bee"), t(0)),
        meta(a, None, "owners", "openlineage", json!(null), t(0)),
        meta(a, None, "description", "openlineage", json!("One row per order"), t(0)),
    ];
    let before = store_queries_total("neo4j");
    neo.put_metadata(rows.clone()).await.expect("put");
    assert_eq!(store_queries_total("neo4j") - before, 1, "one statement for every row");
    lite.put_metadata(rows.clone()).await.expect("embedded put");
    let stored = neo.metadata_for_container(a).await.expect("metadata of a");
    let keys: Vec<(Option<Id>, &str, &str)> =
        stored.iter().map(|m| (m.field_id, m.attribute.as_str(), m.source.as_str())).collect();
    assert_eq!(
        keys,
        vec![
            (None, "description", "openlineage"),
            (None, "description", "user"),
            (None, "owners", "openlineage"),
            (None, "tags", "openlineage"),
            (Some(ax), "type", "openlineage"),
            (Some(ay), "type", "openlineage"),
        ],
        "the container's own values first, then by field, attribute, source"
    );
    assert_eq!(stored[5], rows[0], "a row reads back as written");
    assert_eq!(stored[2].value, json!(null), "a null value is kept");
    assert_eq!(stored[1].details, None);
    assert_eq!(neo.metadata_for_container(b).await.expect("b").len(), 1);
    assert!(neo.metadata_for_container(987_654).await.expect("unknown").is_empty());
    assert_eq!(stored, lite.metadata_for_container(a).await.expect("embedded"));

    // The same values again, later, by another provider without details: observed_at, provider
    // and details move, asserted_at stays.
    let again: Vec<MetadataAssertion> = rows
        .iter()
        .map(|m| MetadataAssertion {
            provider: "another".into(),
            details: None,
            asserted_at: t(10),
            observed_at: t(10),
            ..m.clone()
        })
        .collect();
    put_both(&neo, &lite, again, &both).await;
    let stored = neo.metadata_for_container(a).await.expect("metadata of a");
    assert_eq!(stored.len(), 6, "upserted, not added");
    for m in &stored {
        assert_eq!((m.asserted_at, m.observed_at), (t(0), t(10)), "{m:?}");
        assert_eq!((m.provider.as_str(), &m.details), ("another", &None));
    }

    // A changed value moves asserted_at; null to a value and a value to null count as changes.
    // The same key twice in one call applies in order: changed first, then the same again.
    put_both(
        &neo,
        &lite,
        vec![
            meta(a, None, "description", "openlineage", json!("Orders, one per row"), t(20)),
            meta(a, None, "owners", "openlineage", json!(["team:billing"]), t(20)),
            meta(a, Some(ax), "type", "openlineage", json!(null), t(20)),
            meta(a, None, "description", "openlineage", json!("Orders, one per row"), t(30)),
        ],
        &both,
    )
    .await;
    let stored = neo.metadata_for_container(a).await.expect("metadata of a");
    assert_eq!(
        metadata_state(&stored),
        vec![
            ("description".into(), "openlineage".into(), json!("Orders, one per row"), t(20), t(30)),
            ("description".into(), "user".into(), json!("Mine"), t(0), t(10)),
            ("owners".into(), "openlineage".into(), json!(["team:billing"]), t(20), t(20)),
            ("tags".into(), "openlineage".into(), json!([{"key": "pii", "value": "true"}]), t(0), t(10)),
            ("type".into(), "openlineage".into(), json!(null), t(20), t(20)),
            ("type".into(), "openlineage".into(), json!("INT"), t(0), t(10)),
        ]
    );
    // Back to an earlier value is a change too.
    put_both(&neo, &lite, vec![meta(a, None, "description", "openlineage", json!("One row per order"), t(40))], &both)
        .await;
    let description = &neo.metadata_for_container(a).await.expect("a")[0];
    assert_eq!((description.asserted_at, description.observed_at), (t(40), t(40)));

    // Nothing to put costs nothing.
    let before = store_queries_total("neo4j");
    neo.put_metadata(Vec::new()).await.expect("empty put");
    assert_eq!(store_queries_total("neo4j") - before, 0);
    assert_eq!(neo.export().await.expect("neo4j export"), lite.export().await.expect("embedded export"));
}

#[tokio::test]
async fn metadata_of_a_failed_batch_is_rolled_back_with_it() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b) = (cat.containers[0].id, cat.containers[1].id);
    let old = meta(a, None, "description", "openlineage", json!("Old"), t(0));
    store.put_metadata(vec![old.clone()]).await.expect("put");

    let metadata = vec![
        meta(a, None, "description", "openlineage", json!("New"), t(10)),
        meta(b, Some(cat.fields[1][0].id), "tags", "openlineage", json!(["pii"]), t(10)),
    ];
    // The second assertion names a container that does not exist: nothing of the batch stays.
    let batch = AssertionBatch {
        metadata: metadata.clone(),
        assert: vec![assertion(c(a), c(b), "openlineage", "job"), assertion(c(b), c(987_654), "openlineage", "job")],
        ..AssertionBatch::default()
    };
    match store.apply_assertions(batch, t(10)).await {
        Err(StoreError::NotFound(message)) => assert!(message.contains("987654"), "{message}"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert_eq!(store.metadata_for_container(a).await.expect("a"), vec![old]);
    assert!(store.metadata_for_container(b).await.expect("b").is_empty());
    assert!(all_edges(&store).await.is_empty());

    // Without the bad assertion the batch applies, metadata included; metadata alone costs one
    // statement and changes no edge.
    let batch = AssertionBatch {
        metadata: metadata.clone(),
        assert: vec![assertion(c(a), c(b), "openlineage", "job")],
        ..AssertionBatch::default()
    };
    assert_eq!(store.apply_assertions(batch, t(10)).await.expect("apply"), summary([1, 0, 1, 1, 0, 0]));
    assert_eq!(store.metadata_for_container(a).await.expect("a"), vec![metadata[0].clone()]);
    assert_eq!(store.metadata_for_container(b).await.expect("b"), vec![metadata[1].clone()]);
    let later = vec![meta(a, None, "description", "openlineage", json!("New"), t(20))];
    let before = store_queries_total("neo4j");
    let sum = store
        .apply_assertions(AssertionBatch { metadata: later, ..AssertionBatch::default() }, t(20))
        .await
        .expect("metadata only");
    assert_eq!(store_queries_total("neo4j") - before, 1);
    assert_eq!(sum, summary([0; 6]));
    let description = &store.metadata_for_container(a).await.expect("a")[0];
    assert_eq!((description.asserted_at, description.observed_at), (t(10), t(20)));
}

#[tokio::test]
async fn concurrent_upserts_of_the_same_metadata_key_keep_one_row() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let a = catalog(&store).await.containers[0].id;
    for round in 0..5 {
        let one = vec![
            meta(a, None, "description", "openlineage", json!(format!("one {round}")), t(round)),
            meta(a, None, "tags", "openlineage", json!(["x"]), t(round)),
        ];
        // The same keys in the other order: sorted before writing, so no deadlock either.
        let two = vec![
            meta(a, None, "tags", "openlineage", json!(["x"]), t(round)),
            meta(a, None, "description", "openlineage", json!(format!("two {round}")), t(round)),
        ];
        let (r1, r2) = tokio::join!(store.put_metadata(one), store.put_metadata(two));
        r1.expect("first writer");
        r2.expect("second writer");
    }
    let rows = store.metadata_for_container(a).await.expect("metadata");
    assert_eq!(rows.len(), 2, "one row per key: {rows:?}");
}

// ---- the event log ----

fn event(fingerprint: &str, job: (&str, &str), run: &str, received: Timestamp) -> StoredEvent {
    StoredEvent {
        id: 0,
        fingerprint: fingerprint.to_string(),
        kind: "run_event".to_string(),
        job_namespace: Some(job.0.to_string()),
        job_name: Some(job.1.to_string()),
        run_id: Some(run.to_string()),
        event_type: Some("COMPLETE".to_string()),
        event_time: Some(received - Duration::seconds(1)),
        received_at: received,
        submitted_by: Some("tester".to_string()),
        status: "pending".to_string(),
        errors: json!([]),
        summary: json!({}),
        body: json!({
            "eventType": "COMPLETE",
            "run": {"runId": run},
            "job": {"namespace": job.0, "name": job.1},
            "inputs": [{"namespace": "postgres://db:5432", "name": "db.public.a", "facets": {"x": null}}],
            "ratio": 0.25
        }),
    }
}

fn event_ids(events: &[StoredEvent]) -> Vec<Id> {
    ids(events, |e| e.id)
}

#[tokio::test]
async fn the_event_log_dedupes_lists_replays_and_purges() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let e1 = event("fp-1", ("ns", "a"), "run-1", t(0));
    let e2 = event("fp-2", ("ns", "b"), "run-2", t(10));
    let e3 = event("fp-3", ("ns", "a"), "run-1", t(20));
    let (s1, dup) = store.insert_event(e1.clone()).await.expect("e1");
    assert!(!dup);
    assert_eq!(s1, StoredEvent { id: s1.id, ..e1.clone() }, "stored as given, with its id");
    let (s2, _) = store.insert_event(e2.clone()).await.expect("e2");
    let (s3, _) = store.insert_event(e3.clone()).await.expect("e3");
    assert!(s1.id < s2.id && s2.id < s3.id);

    // The same fingerprint again: nothing written, the stored event comes back.
    let mut again = e1.clone();
    again.body = json!({"different": true});
    again.received_at = t(30);
    let (existing, dup) = store.insert_event(again).await.expect("duplicate");
    assert!(dup);
    assert_eq!(existing, s1);

    store.finish_event(s1.id, "applied", json!([]), json!({"edgesCreated": 2})).await.expect("finish");
    store.finish_event(s2.id, "rejected", json!([{"message": "bad"}]), json!(null)).await.expect("finish");
    store.finish_event(9999, "applied", json!([]), json!({})).await.expect("unknown id: nothing");
    let s1 = StoredEvent { status: "applied".into(), summary: json!({"edgesCreated": 2}), ..s1 };
    let s2 = StoredEvent { status: "rejected".into(), errors: json!([{"message": "bad"}]), summary: json!(null), ..s2 };

    let list = |filter: EventFilter, p: PageRequest| {
        let store = &store;
        async move {
            let page = store.list_events(&filter, p).await.expect("list");
            (event_ids(&page.items), page.total)
        }
    };
    let all = store.list_events(&EventFilter::default(), page(1, 50)).await.expect("all");
    assert_eq!(all.items, vec![s3.clone(), s2.clone(), s1.clone()], "newest first");
    assert_eq!(all.total, 3);
    assert_eq!(list(EventFilter::default(), page(2, 2)).await, (vec![s1.id], 3));
    let applied = EventFilter { status: Some("applied".into()), ..EventFilter::default() };
    assert_eq!(list(applied, page(1, 50)).await, (vec![s1.id], 1));
    let job_a = EventFilter { job_namespace: Some("ns".into()), job_name: Some("a".into()), ..EventFilter::default() };
    assert_eq!(list(job_a, page(1, 50)).await, (vec![s3.id, s1.id], 2));
    let other_ns = EventFilter { job_namespace: Some("other".into()), ..EventFilter::default() };
    assert_eq!(list(other_ns, page(1, 50)).await, (vec![], 0));
    let run_2 = EventFilter { run_id: Some("run-2".into()), ..EventFilter::default() };
    assert_eq!(list(run_2, page(1, 50)).await, (vec![s2.id], 1));
    let since = EventFilter { since: Some(t(10)), ..EventFilter::default() };
    assert_eq!(list(since, page(1, 50)).await, (vec![s3.id, s2.id], 2), "since is inclusive");
    let until = EventFilter { until: Some(t(10)), ..EventFilter::default() };
    assert_eq!(list(until, page(1, 50)).await, (vec![s2.id, s1.id], 2), "until is inclusive");
    let window = EventFilter { since: Some(t(5)), until: Some(t(15)), ..EventFilter::default() };
    assert_eq!(list(window, page(1, 50)).await, (vec![s2.id], 1));

    assert_eq!(store.events_after(0, 10).await.expect("after 0"), vec![s1.clone(), s2.clone(), s3.clone()]);
    assert_eq!(event_ids(&store.events_after(s1.id, 1).await.expect("after 1")), vec![s2.id]);
    assert!(store.events_after(s3.id, 10).await.expect("after last").is_empty());
    assert!(store.events_after(0, 0).await.expect("limit 0").is_empty());
    assert_eq!(event_ids(&store.events_after(0, -1).await.expect("no limit")), vec![s1.id, s2.id, s3.id]);

    // An event with nothing optional set round-trips too.
    let bare = StoredEvent {
        job_namespace: None,
        job_name: None,
        run_id: None,
        event_type: None,
        event_time: None,
        submitted_by: None,
        errors: json!(null),
        summary: json!(null),
        body: json!(null),
        kind: "dataset_event".into(),
        ..event("fp-bare", ("", ""), "", t(25))
    };
    let (bare, _) = store.insert_event(bare).await.expect("bare");
    assert_eq!(store.events_after(s3.id, 10).await.expect("bare back"), vec![bare.clone()]);

    // Purge: strictly before.
    assert_eq!(store.purge_events(t(10)).await.expect("purge"), 1);
    assert_eq!(store.purge_events(t(10)).await.expect("purge again"), 0);
    assert_eq!(list(EventFilter::default(), page(1, 50)).await, (vec![bare.id, s3.id, s2.id], 3));
    let (fresh, dup) = store.insert_event(e1.clone()).await.expect("purged fingerprint is free");
    assert!(!dup);
    assert!(fresh.id > bare.id, "ids are never reused");
}

#[tokio::test]
async fn concurrent_inserts_of_the_same_event_store_it_once() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    for round in 0..5 {
        let e = event(&format!("fp-{round}"), ("ns", "job"), "run", t(round));
        let (r1, r2, r3, r4) = tokio::join!(
            store.insert_event(e.clone()),
            store.insert_event(e.clone()),
            store.insert_event(e.clone()),
            store.insert_event(e.clone()),
        );
        let results: Vec<(StoredEvent, bool)> =
            [r1, r2, r3, r4].into_iter().map(|r| r.expect("a duplicate is not an error")).collect();
        assert_eq!(results.iter().filter(|(_, dup)| !dup).count(), 1, "round {round}: one insert wins");
        let id = results[0].0.id;
        assert!(results.iter().all(|(stored, _)| stored.id == id && stored.fingerprint == e.fingerprint));
    }
    assert_eq!(store.list_events(&EventFilter::default(), page(1, 50)).await.expect("list").total, 5);

    // Another transaction creates the same fingerprint and commits only after insert_event has
    // looked it up and found nothing: the create waits on the constraint, then matches that event.
    let graph = neo4rs::Graph::new(
        std::env::var("NEO4J_URI").expect("NEO4J_URI"),
        std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".into()),
    )
    .await
    .expect("connect");
    let mut txn = graph.start_txn().await.expect("begin");
    let create = "CREATE (e:Event {id: 100000, fingerprint: 'fp-race', kind: 'run_event', \
                  received_at: '2024-05-01T12:00:00.000000Z', status: 'pending', body: '{\"by\":\"other\"}'})";
    txn.run(neo4rs::query(create)).await.expect("uncommitted create");
    let store = std::sync::Arc::new(store);
    let racer = {
        let store = store.clone();
        tokio::spawn(async move { store.insert_event(event("fp-race", ("ns", "job"), "run", t(0))).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!racer.is_finished(), "the insert waits for the other writer");
    txn.commit().await.expect("commit");
    let (existing, dup) = racer.await.expect("join").expect("a duplicate is not an error");
    assert!(dup);
    assert_eq!((existing.id, existing.body), (100_000, json!({"by": "other"})));
    assert_eq!((existing.errors, existing.event_time), (json!(null), None), "absent properties read back empty");
}

#[tokio::test]
async fn concurrent_batches_asserting_the_same_new_edge_both_apply() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b) = (c(cat.containers[0].id), c(cat.containers[1].id));
    for round in 0..5 {
        let source = x(&format!("s3://race/{round}"));
        let one = asserting(vec![assertion(source.clone(), a.clone(), "openlineage", "job-1")]);
        let two = asserting(vec![
            assertion(source.clone(), a.clone(), "openlineage", "job-2"),
            assertion(source.clone(), b.clone(), "openlineage", "job-2"),
        ]);
        let (r1, r2) = tokio::join!(store.apply_assertions(one, t(round)), store.apply_assertions(two, t(round)));
        let (s1, s2) = (r1.expect("first batch"), r2.expect("second batch"));
        assert_eq!(s1.edges_created + s2.edges_created, 2, "round {round}: {s1:?} / {s2:?}");
        assert_eq!(s1.edges_asserted + s2.edges_asserted, 3);
        assert_eq!(s1.evidence_created + s2.evidence_created, 3);
        let touching = store.live_edges_touching_ends(&[source], "openlineage").await.expect("touching");
        assert_eq!(touching.len(), 2);
        let ev = store.evidence_for_edges(&ids(&touching, |e| e.id)).await.expect("evidence");
        assert_eq!(ev.len(), 3);
    }
}

/// The LINEAGE properties of an edge `fqn -> container` as the store writes them.
fn raw_edge_row(id: Id, fqn: &str, container: Id) -> neo4rs::BoltType {
    let row: std::collections::HashMap<String, neo4rs::BoltType> = [
        ("id", id.into()),
        ("ukey", format!("x:{fqn}|c:{container}|openlineage").into()),
        ("created", "2024-05-01T12:00:00.000000Z".into()),
        ("source_type", "openlineage".into()),
        ("intervals", r#"[{"from":"2024-05-01T12:00:00.000000Z","to":null}]"#.into()),
        ("source_kind", "external".into()),
        ("source_fqn", fqn.into()),
        ("target_kind", "container".into()),
        ("target_id", container.into()),
        ("target_container_id", container.into()),
    ]
    .into_iter()
    .map(|(k, v): (&str, neo4rs::BoltType)| (k.to_string(), v))
    .collect();
    row.into()
}

/// Another writer's transaction holds an edge's uniqueness key (it created the edge, or looked it
/// up with the store's own statement, then created it) while a batch asserts the same edge: the
/// batch waits for it to commit, then asserts the edge instead of creating it or failing.
#[tokio::test]
async fn a_batch_waits_for_a_concurrent_writer_of_the_same_edge_and_asserts_it() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let a_id = cat.containers[0].id;
    let store = std::sync::Arc::new(store);
    let graph = neo4rs::Graph::new(
        std::env::var("NEO4J_URI").expect("NEO4J_URI"),
        std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".into()),
    )
    .await
    .expect("connect");
    let create = "MATCH (t:Container {id: $container}) MERGE (s:External {fqn: $fqn}) \
                  CREATE (s)-[r:LINEAGE]->(t) SET r = $row";
    let lookup = include_str!("../cypher/assert_edges_lookup.cypher");
    for (round, look_up_first) in [(0_i64, false), (1, true)] {
        let fqn = format!("s3://race/{round}");
        let mut txn = graph.start_txn().await.expect("begin");
        let ukey = format!("x:{fqn}|c:{a_id}|openlineage");
        if look_up_first {
            txn.run(neo4rs::query(lookup).param("ukeys", vec![ukey])).await.expect("lookup");
        } else {
            let row = raw_edge_row(100_000 + round, &fqn, a_id);
            let query = neo4rs::query(create).param("container", a_id).param("fqn", fqn.clone()).param("row", row);
            txn.run(query).await.expect("uncommitted create");
        }
        let racer = {
            let (store, source, target) = (store.clone(), x(&fqn), c(a_id));
            tokio::spawn(async move {
                let batch = asserting(vec![assertion(source, target, "openlineage", "job")]);
                store.apply_assertions(batch, t(0)).await
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!racer.is_finished(), "round {round}: the batch waits for the other writer");
        if look_up_first {
            let row = raw_edge_row(100_000 + round, &fqn, a_id);
            let query = neo4rs::query(create).param("container", a_id).param("fqn", fqn.clone()).param("row", row);
            txn.run(query).await.expect("create after the lookup");
        }
        txn.commit().await.expect("commit");
        let sum = racer.await.expect("join").expect("the batch applies");
        assert_eq!(sum, summary([0, 0, 1, 1, 0, 0]), "round {round}: asserted, not created");
        let touching = store.live_edges_touching_ends(&[x(&fqn)], "openlineage").await.expect("touching");
        assert_eq!(ids(&touching, |e| e.id), vec![100_000 + round], "one edge, the other writer's");
    }
}

#[tokio::test]
async fn export_then_import_round_trips_asserted_edges_and_events() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let cat = catalog(&store).await;
    let (a, b) = (c(cat.containers[0].id), c(cat.containers[1].id));
    let (a_id, b_id, ax_id) = (cat.containers[0].id, cat.containers[1].id, cat.fields[0][0].id);
    let raw = x("s3://raw");
    let mut batch = asserting(vec![
        assertion(a.clone(), b.clone(), "openlineage", "job-1"),
        assertion(raw.clone(), a.clone(), "openlineage", "job-1"),
    ]);
    batch.metadata = vec![
        meta(a_id, Some(ax_id), "tags", "openlineage", json!([{"key": "pii", "value": "true"}]), t(0)),
        meta(a_id, None, "description", "openlineage", json!("One row per order"), t(0)),
    ];
    store.apply_assertions(batch, t(0)).await.expect("assert");
    let user = MetadataAssertion { details: None, ..meta(b_id, None, "description", "user", json!("Mine"), t(15)) };
    store.put_metadata(vec![user]).await.expect("user metadata");
    // Reported again later with the same value: only observed_at moves, and the round trip keeps
    // both instants.
    store
        .put_metadata(vec![meta(a_id, None, "description", "openlineage", json!("One row per order"), t(25))])
        .await
        .expect("same value");
    let metadata_before = (
        store.metadata_for_container(a_id).await.expect("a metadata"),
        store.metadata_for_container(b_id).await.expect("b metadata"),
    );
    assert_eq!(metadata_before.0.len(), 2);
    assert_eq!((metadata_before.0[0].asserted_at, metadata_before.0[0].observed_at), (t(0), t(25)));
    let ab = find(&all_edges(&store).await, &a, &b, "openlineage");
    let retire = AssertionBatch {
        metadata: vec![],
        assert: vec![],
        retire_evidence: vec![(ab.id, "job-1".into())],
        retire_candidates: vec![ab.id],
    };
    store.apply_assertions(retire, t(10)).await.expect("retire");
    store
        .apply_assertions(asserting(vec![assertion(a.clone(), b.clone(), "openlineage", "job-2")]), t(20))
        .await
        .expect("revive");
    let mut events = Vec::new();
    for (i, received) in [t(0), t(5), t(9)].into_iter().enumerate() {
        events
            .push(store.insert_event(event(&format!("fp-{i}"), ("ns", "a"), "run", received)).await.expect("event").0);
    }
    store.finish_event(events[0].id, "applied", json!([]), json!({"edgesCreated": 2})).await.expect("finish");

    let exported = store.export().await.expect("export");
    let order =
        ["datastore", "container", "field", "edge", "evidence", "metadata", "event", "job", "run", "job_io", "run_io"];
    let kinds: Vec<&str> = exported
        .iter()
        .map(|r| match r {
            Record::Datastore(_) => "datastore",
            Record::Container(_) => "container",
            Record::Field(_) => "field",
            Record::Edge(_) => "edge",
            Record::Evidence(_) => "evidence",
            Record::Event(_) => "event",
            Record::Metadata(_) => "metadata",
            Record::Doc { .. } => "doc",
            Record::Job(_) => "job",
            Record::Run(_) => "run",
            Record::JobIo { .. } => "job_io",
            Record::RunIo { .. } => "run_io",
        })
        .collect();
    let mut sorted = kinds.clone();
    sorted.sort_by_key(|k| order.iter().position(|x| x == k));
    assert_eq!(kinds, sorted, "records come in replayable order, metadata before events");
    let exported_metadata: Vec<MetadataAssertion> =
        exported.iter().filter_map(|r| if let Record::Metadata(m) = r { Some(m.clone()) } else { None }).collect();
    let mut all_metadata = metadata_before.0.clone();
    all_metadata.extend(metadata_before.1.clone());
    assert_eq!(exported_metadata, all_metadata, "every metadata row, by container, field, attribute, source");
    let exported_events: Vec<StoredEvent> =
        exported.iter().filter_map(|r| if let Record::Event(e) = r { Some(e.clone()) } else { None }).collect();
    assert_eq!(event_ids(&exported_events), event_ids(&events), "every event, by id");
    assert_eq!(exported_events[0].status, "applied");
    let exported_edge = exported.iter().find_map(|r| match r {
        Record::Edge(e) if e.id == ab.id => Some(e.clone()),
        _ => None,
    });
    assert_eq!(
        exported_edge.map(|e| e.intervals),
        Some(vec![Interval { from: t(0), to: Some(t(10)) }, Interval { from: t(20), to: None }])
    );

    store.wipe().await.expect("wipe");
    assert_eq!(store.import(exported.clone()).await.expect("import"), exported.len());
    assert_eq!(store.export().await.expect("export again"), exported);
    assert_eq!(
        (
            store.metadata_for_container(a_id).await.expect("a metadata"),
            store.metadata_for_container(b_id).await.expect("b metadata"),
        ),
        metadata_before
    );
    // Imported rows are upserted onto, not duplicated: the same value keeps its asserted_at.
    store
        .put_metadata(vec![meta(a_id, None, "description", "openlineage", json!("One row per order"), t(70))])
        .await
        .expect("same value after import");
    let after = store.metadata_for_container(a_id).await.expect("a metadata");
    assert_eq!(after.len(), 2);
    assert_eq!((after[0].asserted_at, after[0].observed_at), (t(0), t(70)));

    // Fingerprints are still known, and event ids continue past the imported ones.
    let (known, dup) = store.insert_event(event("fp-1", ("ns", "a"), "run", t(50))).await.expect("known");
    assert!(dup);
    assert_eq!(known, exported_events[1]);
    let (fresh, dup) = store.insert_event(event("fp-new", ("ns", "a"), "run", t(50))).await.expect("new");
    assert!(!dup);
    assert!(fresh.id > events[2].id);
    // The revived edge is asserted again, not created.
    let sum = store
        .apply_assertions(asserting(vec![assertion(a.clone(), b.clone(), "openlineage", "job-2")]), t(60))
        .await
        .expect("assert after import");
    assert_eq!(sum, summary([0, 0, 1, 0, 0, 0]));

    // Events repeating a fingerprint are refused as a whole.
    store.wipe().await.expect("wipe");
    let mut twice = exported_events.clone();
    twice.push(StoredEvent { id: 9999, ..exported_events[0].clone() });
    match store.import(twice.into_iter().map(Record::Event).collect()).await {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(store.export().await.expect("export").is_empty(), "nothing was imported");
}

// ---- the same behaviour as the embedded store ----

/// Applies one batch to both stores and checks they answer and end up the same.
async fn apply_both(neo: &Neo4jStore, lite: &SqliteStore, batch: AssertionBatch, now: Timestamp) -> AssertionSummary {
    let containers: BTreeSet<Id> = batch.metadata.iter().map(|m| m.container_id).collect();
    let from_neo = neo.apply_assertions(batch.clone(), now).await.expect("neo4j");
    let from_lite = lite.apply_assertions(batch, now).await.expect("embedded");
    assert_eq!(from_neo, from_lite, "summaries at {now}");
    let (neo_edges, lite_edges) = (all_edges(neo).await, all_edges(lite).await);
    assert_eq!(neo_edges, lite_edges, "edges at {now}");
    let edge_ids = ids(&neo_edges, |e| e.id);
    assert_eq!(
        neo.evidence_for_edges(&edge_ids).await.expect("neo4j evidence"),
        lite.evidence_for_edges(&edge_ids).await.expect("embedded evidence"),
        "evidence at {now}"
    );
    for id in containers {
        assert_eq!(
            neo.metadata_for_container(id).await.expect("neo4j metadata"),
            lite.metadata_for_container(id).await.expect("embedded metadata"),
            "metadata of container {id} at {now}"
        );
    }
    from_neo
}

#[tokio::test]
async fn assertions_and_the_event_log_behave_as_in_the_embedded_store() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let lite = SqliteStore::open(dir.path()).expect("embedded store");
    let cat = catalog(&neo).await;
    let lite_cat = catalog(&lite).await;
    assert_eq!(cat.containers, lite_cat.containers, "the same catalog ids in both stores");
    assert_eq!(cat.fields, lite_cat.fields);
    let (a, b, cc) = (c(cat.containers[0].id), c(cat.containers[1].id), c(cat.containers[2].id));
    let (ax, ay, bx, by) = (f(&cat.fields[0][0]), f(&cat.fields[0][1]), f(&cat.fields[1][0]), f(&cat.fields[1][1]));
    let (raw, out) = (x("s3://raw"), x("kafka://topic"));

    // New edges, one asserted twice with other attributes, one (edge, key) twice.
    let mut ab1 = assertion(a.clone(), b.clone(), "openlineage", "job-1");
    ab1.edge.operation = Some("INSERT".into());
    ab1.edge.description = Some("load".into());
    ab1.edge.last_asserted_at = Some(t(5));
    let mut ab2 = assertion(a.clone(), b.clone(), "openlineage", "job-2");
    ab2.edge.derived = Some(false);
    ab2.edge.transformations = Some(json!(null));
    ab2.edge.last_asserted_at = Some(t(7));
    ab2.evidence.details = None;
    let mut axbx = assertion(ax.clone(), bx.clone(), "openlineage", "job-1");
    axbx.edge.transformations = Some(json!([{"type": "INDIRECT", "subtype": "JOIN"}]));
    let rawa = assertion(raw.clone(), a.clone(), "openlineage", "job-1");
    let mut rawa_again = rawa.clone();
    rawa_again.evidence.source_relation = Some("raw".into());
    let bc = assertion(b.clone(), cc.clone(), "postgresql", "query-1");
    let (a_id, b_id, ax_id) = (cat.containers[0].id, cat.containers[1].id, cat.fields[0][0].id);
    let mut batch = asserting(vec![ab1, ab2, axbx, rawa, bc, rawa_again]);
    batch.metadata = vec![
        meta(b_id, None, "owners", "openlineage", json!([{"name": "team:billing"}]), t(0)),
        meta(a_id, Some(ax_id), "type", "openlineage", json!("INT"), t(0)),
        meta(a_id, None, "description", "openlineage", json!("Orders"), t(0)),
        meta(a_id, None, "description", "catalog", json!(null), t(0)),
    ];
    let sum = apply_both(&neo, &lite, batch, t(0)).await;
    assert_eq!(sum, summary([4, 0, 6, 5, 0, 0]));
    let edges = all_edges(&neo).await;
    let ab_id = find(&edges, &a, &b, "openlineage").id;
    let axbx_id = find(&edges, &ax, &bx, "openlineage").id;
    let rawa_id = find(&edges, &raw, &a, "openlineage").id;

    // Retire evidence (with repeats and unknown rows) and the edges left without any.
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![],
        retire_evidence: vec![
            (ab_id, "job-1".into()),
            (ab_id, "job-1".into()),
            (axbx_id, "job-1".into()),
            (9999, "job-1".into()),
        ],
        retire_candidates: vec![ab_id, axbx_id, 9999, axbx_id],
    };
    let batch = AssertionBatch {
        metadata: vec![
            meta(a_id, None, "description", "openlineage", json!("Orders"), t(10)),
            meta(a_id, Some(ax_id), "type", "openlineage", json!("BIGINT"), t(10)),
            meta(b_id, None, "owners", "openlineage", json!([]), t(10)),
            meta(b_id, None, "owners", "openlineage", json!([]), t(11)),
        ],
        ..batch
    };
    assert_eq!(apply_both(&neo, &lite, batch, t(10)).await, summary([0, 0, 0, 0, 2, 1]));
    // A user's own value; then a batch that fails in Neo4j (a missing end; the embedded store
    // does not check ends, so it is not sent there) leaves the two stores' metadata the same.
    put_both(&neo, &lite, vec![meta(a_id, None, "description", "user", json!("Mine"), t(12))], &[a_id]).await;
    let failing = AssertionBatch {
        metadata: vec![meta(a_id, None, "description", "openlineage", json!("Lost"), t(15))],
        assert: vec![assertion(a.clone(), c(987_654), "openlineage", "job-9")],
        ..AssertionBatch::default()
    };
    // Through a connection of its own, as another replica would send it: the edge id it takes
    // is not given back when it fails (ids have gaps on Neo4j, see the store's `ids`), and from
    // another block than `neo`'s, so `neo`'s next edges keep the embedded store's ids.
    let other = connect_again().await;
    assert!(matches!(other.apply_assertions(failing, t(15)).await, Err(StoreError::NotFound(_))));
    let a_metadata = neo.metadata_for_container(a_id).await.expect("neo4j metadata");
    assert_eq!(a_metadata, lite.metadata_for_container(a_id).await.expect("embedded metadata"));
    assert!(a_metadata.iter().all(|m| m.value != json!("Lost")));

    // Revive one edge, create another, retire a third in the same batch.
    let mut revive = assertion(ax.clone(), bx.clone(), "openlineage", "job-1");
    revive.edge.derived = Some(true);
    revive.edge.operation = Some("UPDATE".into());
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![revive, assertion(ay.clone(), by.clone(), "openlineage", "job-3")],
        retire_evidence: vec![(ab_id, "job-2".into())],
        retire_candidates: vec![ab_id],
    };
    assert_eq!(apply_both(&neo, &lite, batch, t(20)).await, summary([1, 1, 2, 2, 1, 1]));

    // Revived and retired again within one batch; a new edge to an external asset.
    let mut back = assertion(a.clone(), b.clone(), "openlineage", "job-4");
    back.edge.last_asserted_at = Some(t(40));
    let batch = AssertionBatch {
        metadata: vec![],
        assert: vec![back, assertion(cc.clone(), out.clone(), "openlineage", "job-4")],
        retire_evidence: vec![(ab_id, "job-4".into())],
        retire_candidates: vec![ab_id, rawa_id],
    };
    assert_eq!(apply_both(&neo, &lite, batch, t(30)).await, summary([1, 1, 2, 2, 1, 1]));
    let ab = &neo.edges_by_ids(&[ab_id]).await.expect("ab")[0];
    assert_eq!(ab.intervals.last(), Some(&Interval { from: t(30), to: Some(t(30)) }));

    // Nothing to do, and candidates that are still backed.
    assert_eq!(apply_both(&neo, &lite, AssertionBatch::default(), t(40)).await, summary([0; 6]));
    let batch = AssertionBatch { retire_candidates: vec![rawa_id, axbx_id], ..AssertionBatch::default() };
    assert_eq!(apply_both(&neo, &lite, batch, t(50)).await, summary([0; 6]));

    let keys: Vec<String> = ["job-1", "job-2", "job-3", "job-4", "query-1", "nobody"].map(String::from).to_vec();
    assert_eq!(
        neo.evidence_by_keys(&keys).await.expect("neo4j"),
        lite.evidence_by_keys(&keys).await.expect("embedded")
    );
    for (ends, source_type) in [
        (vec![a.clone(), bx.clone(), raw.clone()], "openlineage"),
        (vec![b.clone()], "postgresql"),
        (vec![b.clone()], "openlineage"),
        (vec![cc.clone(), out.clone(), ay.clone()], "openlineage"),
        (vec![x("s3://elsewhere")], "openlineage"),
    ] {
        assert_eq!(
            neo.live_edges_touching_ends(&ends, source_type).await.expect("neo4j"),
            lite.live_edges_touching_ends(&ends, source_type).await.expect("embedded"),
            "live edges touching {ends:?} ({source_type})"
        );
    }

    // The event log.
    for e in [
        event("fp-1", ("ns", "a"), "run-1", t(0)),
        event("fp-2", ("ns", "b"), "run-2", t(10)),
        event("fp-1", ("ns", "a"), "run-1", t(15)),
        event("fp-3", ("ns", "a"), "run-1", t(20)),
    ] {
        assert_eq!(neo.insert_event(e.clone()).await.expect("neo4j"), lite.insert_event(e).await.expect("embedded"));
    }
    for store in [&neo as &dyn Store, &lite as &dyn Store] {
        store.finish_event(1, "applied", json!([]), json!({"edgesCreated": 4})).await.expect("finish");
        store.finish_event(2, "failed", json!(["boom"]), json!(null)).await.expect("finish");
    }
    let filters = [
        EventFilter::default(),
        EventFilter { status: Some("applied".into()), ..EventFilter::default() },
        EventFilter { job_namespace: Some("ns".into()), job_name: Some("a".into()), ..EventFilter::default() },
        EventFilter { run_id: Some("run-1".into()), since: Some(t(10)), ..EventFilter::default() },
        EventFilter { until: Some(t(10)), ..EventFilter::default() },
    ];
    for filter in &filters {
        for p in [page(1, 50), page(2, 1)] {
            let from_neo = neo.list_events(filter, p).await.expect("neo4j");
            let from_lite = lite.list_events(filter, p).await.expect("embedded");
            assert_eq!((from_neo.items, from_neo.total), (from_lite.items, from_lite.total), "{filter:?} {p:?}");
        }
    }
    for (after, limit) in [(0, 10), (1, 1), (3, 10), (0, -1)] {
        assert_eq!(
            neo.events_after(after, limit).await.expect("neo4j"),
            lite.events_after(after, limit).await.expect("embedded"),
            "events after {after}, limit {limit}"
        );
    }
    assert_eq!(neo.purge_events(t(10)).await.expect("neo4j"), lite.purge_events(t(10)).await.expect("embedded"));

    // And the whole store exports the same records, which each store imports from the other.
    let exported = neo.export().await.expect("neo4j export");
    assert_eq!(exported, lite.export().await.expect("embedded export"));
    assert!(exported.iter().filter(|r| matches!(r, Record::Metadata(_))).count() >= 4);
    let other_dir = tempfile::tempdir().expect("temp dir");
    let other = SqliteStore::open(other_dir.path()).expect("another embedded store");
    other.import(exported.clone()).await.expect("embedded import of the neo4j export");
    assert_eq!(other.export().await.expect("embedded export"), exported);
    neo.wipe().await.expect("wipe");
    neo.import(lite.export().await.expect("embedded export")).await.expect("neo4j import of the embedded export");
    assert_eq!(neo.export().await.expect("neo4j export"), exported);
}

// ---- jobs and runs ----

fn job_name(name: &str) -> JobName {
    JobName { namespace: "airflow".to_string(), name: name.to_string() }
}

fn run_key(job: &str) -> String {
    json!(["openlineage", "run", "airflow", job]).to_string()
}

fn io(direction: IoDirection, end: End, name: &str, at: Timestamp) -> IoEntry {
    IoEntry { direction, end, namespace: "postgres://db:5432".to_string(), name: name.to_string(), at, completed: None }
}

/// One RunEvent of `job`'s run `run_id` in `state` at `t(at)`, reading and writing `io`.
fn run_event(job: &str, run_id: &str, state: &str, at: i64, io: Vec<IoEntry>) -> RunRecord {
    RunRecord {
        job: JobUpsert::named(job_name(job), t(at)),
        run: Some(RunUpsert {
            run_id: run_id.to_string(),
            state: RunState::parse(state).expect("a run state"),
            at: t(at),
            start: None,
            nominal_start: None,
            nominal_end: None,
            error_message: None,
            error_language: None,
            parent_run_id: None,
        }),
        io,
        event_id: 1,
        evidence_key: run_key(job),
    }
}

/// The jobs, runs and datasets of the story `record_story` tells, recorded in this order: a run
/// whose events arrive out of order (COMPLETE first, its outputs only there, its inputs only on
/// START), a later failed run of the same job, a child job's run under the first run (recorded
/// before its parent run exists), and a job event of a design-time job.
fn story(cat: &Catalog) -> Vec<RunRecord> {
    let (a, b, cc) = (c(cat.containers[0].id), c(cat.containers[1].id), c(cat.containers[2].id));
    let raw = x("s3://raw/orders");
    let mut child = run_event("etl.load", "r-child", "START", 2, vec![io(IoDirection::Read, cc.clone(), "c", t(2))]);
    child.job.parent = Some(job_name("etl"));
    child.job.root = Some(job_name("dag"));
    if let Some(run) = child.run.as_mut() {
        run.parent_run_id = Some("r-1".to_string());
    }
    let mut complete = run_event("etl", "r-1", "COMPLETE", 10, vec![io(IoDirection::Wrote, b.clone(), "b", t(10))]);
    complete.job.description = Some("loads b".to_string());
    complete.job.owners = vec!["team:data".to_string()];
    complete.job.parent = Some(job_name("dag"));
    let mut failed = run_event("etl", "r-2", "FAIL", 30, vec![io(IoDirection::Wrote, b.clone(), "b", t(30))]);
    if let Some(run) = failed.run.as_mut() {
        run.error_message = Some("division by zero".to_string());
        run.error_language = Some("python".to_string());
    }
    let mut design = run_event("report", "", "OTHER", 40, vec![io(IoDirection::Read, b.clone(), "b", t(40))]);
    design.run = None;
    design.evidence_key = json!(["openlineage", "job", "airflow", "report"]).to_string();
    design.io.push(io(IoDirection::Wrote, raw.clone(), "orders", t(40)));
    vec![
        child,
        complete,
        run_event(
            "etl",
            "r-1",
            "START",
            0,
            vec![io(IoDirection::Read, a.clone(), "a", t(0)), io(IoDirection::Read, raw, "orders", t(0))],
        ),
        run_event("etl", "r-1", "RUNNING", 5, vec![io(IoDirection::Read, a.clone(), "a", t(5))]),
        run_event("etl", "r-2", "START", 20, vec![io(IoDirection::Read, a, "a", t(20))]),
        failed,
        design,
    ]
}

/// Every jobs-and-runs read of a store, for comparing two stores.
#[derive(Debug, PartialEq)]
struct JobReads {
    jobs: Vec<Job>,
    by_name: Option<Job>,
    listed: Vec<(Vec<Id>, i64)>,
    children: Vec<Job>,
    runs: Vec<Run>,
    by_run_id: Vec<Run>,
    of_job: Vec<(Vec<Id>, i64)>,
    child_runs: Vec<Run>,
    job_io: Vec<(Id, IoEntry)>,
    run_io: Vec<(Id, IoEntry)>,
    of_ends: Vec<(Id, IoEntry)>,
    failed: Vec<Run>,
}

async fn job_reads(store: &impl Store, cat: &Catalog) -> JobReads {
    let ids: Vec<Id> = (1..=8).collect();
    let jobs = store.jobs_by_ids(&ids).await.expect("jobs_by_ids");
    let b_id = cat.containers[1].id;
    let filters = [
        JobFilter::default(),
        JobFilter { namespace: Some("airflow".into()), name: Some("ET".to_lowercase()), ..JobFilter::default() },
        JobFilter { last_run_state: Some(RunState::Fail), ..JobFilter::default() },
        JobFilter { container_ids: Some(vec![b_id]), ..JobFilter::default() },
        JobFilter { namespace: Some("elsewhere".into()), ..JobFilter::default() },
    ];
    let mut listed = Vec::new();
    for f in &filters {
        for p in [page(1, 2), page(2, 2)] {
            let got = store.list_jobs(f, p).await.expect("list_jobs");
            listed.push((ids_of(&got.items, |j| j.id), got.total));
        }
    }
    let etl = store.job_by_name("airflow", "etl").await.expect("job_by_name");
    let etl_id = etl.as_ref().map_or(0, |j| j.id);
    let runs = store.runs_by_ids(&ids).await.expect("runs_by_ids");
    let run_filters = [
        RunFilter::default(),
        RunFilter { state: Some(RunState::Complete), ..RunFilter::default() },
        RunFilter { since: Some(t(15)), until: Some(t(25)), ..RunFilter::default() },
    ];
    let mut of_job = Vec::new();
    for f in &run_filters {
        for p in [page(1, 1), page(2, 1)] {
            let got = store.runs_of_job(etl_id, f, p).await.expect("runs_of_job");
            of_job.push((ids_of(&got.items, |r| r.id), got.total));
        }
    }
    let run_ids = ["r-1".to_string(), "r-2".to_string(), "r-child".to_string(), "nope".to_string()];
    let ends = [c(b_id), c(cat.containers[0].id), x("s3://raw/orders")];
    JobReads {
        children: store.child_jobs(&ids).await.expect("child_jobs"),
        by_name: etl,
        listed,
        by_run_id: store.runs_by_run_ids(&run_ids).await.expect("runs_by_run_ids"),
        of_job,
        child_runs: store.child_runs(&run_ids).await.expect("child_runs"),
        job_io: store.job_io(&ids).await.expect("job_io"),
        run_io: store.run_io(&ids).await.expect("run_io"),
        of_ends: store.jobs_of_ends(&ends).await.expect("jobs_of_ends"),
        failed: store.failed_latest_runs(Some(t(0)), None, 10).await.expect("failed_latest_runs"),
        jobs,
        runs,
    }
}

fn ids_of<T>(items: &[T], id: impl Fn(&T) -> Id) -> Vec<Id> {
    items.iter().map(id).collect()
}

async fn raw_graph() -> neo4rs::Graph {
    neo4rs::Graph::new(
        std::env::var("NEO4J_URI").expect("NEO4J_URI"),
        std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
        std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".into()),
    )
    .await
    .expect("connect")
}

/// How many relationships of each type the graph holds.
async fn relationship_counts(graph: &neo4rs::Graph) -> std::collections::BTreeMap<String, i64> {
    let mut rows = graph
        .execute(neo4rs::query("MATCH ()-[r]->() RETURN type(r) AS kind, count(r) AS n"))
        .await
        .expect("count relationships");
    let mut out = std::collections::BTreeMap::new();
    while let Some(row) = rows.next().await.expect("row") {
        out.insert(row.get::<String>("kind").expect("kind"), row.get::<i64>("n").expect("n"));
    }
    out
}

#[tokio::test]
async fn record_run_folds_events_as_the_embedded_store_does() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let lite = SqliteStore::open(dir.path()).expect("embedded store");
    let cat = catalog(&neo).await;
    catalog(&lite).await;
    for (i, record) in story(&cat).into_iter().enumerate() {
        neo.record_run(record.clone()).await.expect("neo4j record_run");
        lite.record_run(record).await.expect("embedded record_run");
        assert_eq!(job_reads(&neo, &cat).await, job_reads(&lite, &cat).await, "after record {i}");
    }
    let reads = job_reads(&neo, &cat).await;

    // The jobs: the child's parent and root were created by name, in the embedded store's order.
    let names: Vec<&str> = reads.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["etl", "dag", "etl.load", "report"]);
    let etl = reads.by_name.clone().expect("etl");
    assert_eq!(etl.description.as_deref(), Some("loads b"));
    assert_eq!(etl.owners, ["team:data"]);
    assert_eq!((etl.first_seen_at, etl.last_seen_at), (t(0), t(30)));
    // The child job hangs under etl, etl under dag.
    let child = reads.jobs.iter().find(|j| j.name == "etl.load").expect("child job");
    assert_eq!(child.parent_id, Some(etl.id));
    assert_eq!(etl.parent_id, reads.jobs.iter().find(|j| j.name == "dag").map(|j| j.id));

    // r-1: COMPLETE arrived first, then START and RUNNING: it stays COMPLETE, began at START.
    let r1 = reads.by_run_id.iter().find(|r| r.run_id == "r-1").expect("r-1");
    assert_eq!(r1.state, RunState::Complete);
    assert_eq!(r1.states.iter().map(|s| s.state.as_str()).collect::<Vec<_>>(), ["START", "RUNNING", "COMPLETE"]);
    assert_eq!((r1.started_at, r1.ended_at, r1.duration_ms()), (Some(t(0)), Some(t(10)), Some(10_000)));
    // Its datasets are the union of its events', each at its latest time.
    let r1_io: Vec<(IoDirection, String, Timestamp)> =
        reads.run_io.iter().filter(|(id, _)| *id == r1.id).map(|(_, e)| (e.direction, e.end.key(), e.at)).collect();
    let (a_id, b_id) = (cat.containers[0].id, cat.containers[1].id);
    assert_eq!(
        r1_io,
        [
            (IoDirection::Read, format!("c:{a_id}"), t(5)),
            (IoDirection::Read, "x:s3://raw/orders".to_string(), t(0)),
            (IoDirection::Wrote, format!("c:{b_id}"), t(10)),
        ]
    );
    // r-2 failed later: it is the latest run, with its error, and an incident.
    let r2 = reads.by_run_id.iter().find(|r| r.run_id == "r-2").expect("r-2");
    assert_eq!(etl.latest_run_id, Some(r2.id));
    assert_eq!((r2.state.as_str(), r2.error_message.as_deref()), ("FAIL", Some("division by zero")));
    assert_eq!(ids_of(&reads.failed, |r| r.id), [r2.id]);
    // b was last written completely by r-1, though r-2 wrote it later.
    let b_write = reads
        .job_io
        .iter()
        .find(|(id, e)| *id == etl.id && e.direction == IoDirection::Wrote)
        .map(|(_, e)| e.clone())
        .expect("etl writes b");
    assert_eq!((b_write.at, b_write.completed), (t(30), Some((r1.id, t(10)))));
    // The child run was recorded before its parent run: it is r-1's child all the same.
    assert_eq!(reads.child_runs.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(), ["r-child"]);
    // Runs of etl, latest first.
    assert_eq!(reads.of_job[0], (vec![r2.id], 2));
    assert_eq!(reads.of_job[1], (vec![r1.id], 2));

    // The same again changes nothing.
    for record in story(&cat) {
        neo.record_run(record).await.expect("again");
    }
    assert_eq!(job_reads(&neo, &cat).await, reads, "recording the same events again");

    // What a person sees in Neo4j Browser.
    let counts = relationship_counts(&raw_graph().await).await;
    let count = |k: &str| counts.get(k).copied().unwrap_or(0);
    assert_eq!(count("HAS_RUN"), 3, "{counts:?}");
    assert_eq!(count("READ"), 4, "r-1 read a and raw, r-2 a, r-child c: {counts:?}");
    assert_eq!(count("WROTE"), 2, "{counts:?}");
    assert_eq!(count("READS"), 4, "etl a and raw, etl.load c, report b: {counts:?}");
    assert_eq!(count("WRITES"), 2, "{counts:?}");
    assert_eq!(count("CHILD_OF"), 3, "etl -> dag, etl.load -> etl, r-child -> r-1: {counts:?}");
}

/// The jobs-and-runs records of an export.
fn job_records(records: &[Record]) -> Vec<Record> {
    records
        .iter()
        .filter(|r| matches!(r, Record::Job(_) | Record::Run(_) | Record::JobIo { .. } | Record::RunIo { .. }))
        .cloned()
        .collect()
}

#[tokio::test]
async fn jobs_and_runs_round_trip_through_export_and_import() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let lite = SqliteStore::open(dir.path()).expect("embedded store");
    let cat = catalog(&neo).await;
    catalog(&lite).await;
    for record in story(&cat) {
        neo.record_run(record.clone()).await.expect("neo4j record_run");
        lite.record_run(record).await.expect("embedded record_run");
    }
    let exported = neo.export().await.expect("export");
    let from_lite = lite.export().await.expect("embedded export");
    let jobs = job_records(&exported);
    assert_eq!(jobs.len(), 4 + 3 + 6 + 6, "jobs, runs, job datasets, run datasets: {jobs:?}");
    assert_eq!(jobs, job_records(&from_lite), "the embedded store exports the same jobs and runs");
    // After the events, in the embedded store's order.
    let first_job = exported.iter().position(|r| matches!(r, Record::Job(_))).expect("a job record");
    assert!(exported[..first_job].iter().any(|r| matches!(r, Record::Datastore(_))));
    assert!(exported[first_job..].iter().all(|r| job_records(std::slice::from_ref(r)).len() == 1));
    let before = relationship_counts(&raw_graph().await).await;

    neo.wipe().await.expect("wipe");
    assert_eq!(neo.import(exported.clone()).await.expect("import"), exported.len());
    assert_eq!(neo.export().await.expect("export again"), exported, "export -> import -> export");
    assert_eq!(job_reads(&neo, &cat).await, job_reads(&lite, &cat).await, "imported reads");
    assert_eq!(relationship_counts(&raw_graph().await).await, before, "the same relationships");
    // The counters continue past the imported ids.
    let mut next = story(&cat)[1].clone();
    next.job = JobUpsert::named(job_name("new-job"), t(50));
    if let Some(run) = next.run.as_mut() {
        run.run_id = "r-new".to_string();
    }
    neo.record_run(next).await.expect("record after import");
    let job = neo.job_by_name("airflow", "new-job").await.expect("read").expect("new job");
    assert_eq!(job.id, 5);
    let run = neo.runs_by_run_ids(&["r-new".to_string()]).await.expect("read");
    assert_eq!(ids_of(&run, |r| r.id), [4]);

    // The embedded store's export imports into Neo4j too.
    neo.wipe().await.expect("wipe");
    neo.import(from_lite.clone()).await.expect("import the embedded export");
    assert_eq!(job_records(&neo.export().await.expect("export")), job_records(&from_lite));
}

#[tokio::test]
async fn evidence_is_tied_to_the_run_or_job_that_asserted_it() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let cat = catalog(&neo).await;
    let (a, b) = (c(cat.containers[0].id), c(cat.containers[1].id));
    let graph = raw_graph().await;
    let asserted_by = async |graph: &neo4rs::Graph| -> Vec<(Id, String)> {
        let mut rows = graph
            .execute(neo4rs::query(
                "MATCH (e:Evidence)-[:ASSERTED_BY]->(o) \
                 RETURN e.edge_id AS edge, coalesce(o.run_id, o.name) AS owner ORDER BY edge, owner",
            ))
            .await
            .expect("query");
        let mut out = Vec::new();
        while let Some(row) = rows.next().await.expect("row") {
            out.push((row.get::<Id>("edge").expect("edge"), row.get::<String>("owner").expect("owner")));
        }
        out
    };
    let assert_by_run = async |run_id: &str, key: &str| {
        let mut assertion = assertion(a.clone(), b.clone(), "openlineage", key);
        assertion.evidence.details = Some(json!({"runId": run_id, "job": {"namespace": "airflow", "name": "etl"}}));
        neo.apply_assertions(asserting(vec![assertion]), t(0)).await.expect("assert");
    };
    assert_by_run("r-1", &run_key("etl")).await;
    neo.record_run(run_event("etl", "r-1", "START", 0, Vec::new())).await.expect("r-1");
    let edge = all_edges(&neo).await[0].id;
    assert_eq!(asserted_by(&graph).await, [(edge, "r-1".to_string())]);
    // The next run asserts the edge again: the evidence moves to it.
    assert_by_run("r-2", &run_key("etl")).await;
    neo.record_run(run_event("etl", "r-2", "START", 20, Vec::new())).await.expect("r-2");
    assert_eq!(asserted_by(&graph).await, [(edge, "r-2".to_string())]);
    // A late event of the first run does not take it back.
    neo.record_run(run_event("etl", "r-1", "COMPLETE", 10, Vec::new())).await.expect("r-1 again");
    assert_eq!(asserted_by(&graph).await, [(edge, "r-2".to_string())]);
    // A job event's evidence is tied to the job.
    let job_key = json!(["openlineage", "job", "airflow", "design"]).to_string();
    let mut design = assertion(b.clone(), a.clone(), "openlineage", &job_key);
    design.evidence.details = Some(json!({"runId": null, "job": {"namespace": "airflow", "name": "design"}}));
    neo.apply_assertions(asserting(vec![design]), t(0)).await.expect("assert");
    let mut event = run_event("design", "", "OTHER", 30, Vec::new());
    event.run = None;
    event.evidence_key = job_key;
    neo.record_run(event).await.expect("job event");
    let edges = all_edges(&neo).await;
    let back = find(&edges, &b, &a, "openlineage").id;
    let mut expected = vec![(edge, "r-2".to_string()), (back, "design".to_string())];
    expected.sort();
    assert_eq!(asserted_by(&graph).await, expected);

    // An import ties them the same way.
    let exported = neo.export().await.expect("export");
    neo.wipe().await.expect("wipe");
    neo.import(exported).await.expect("import");
    assert_eq!(asserted_by(&graph).await, expected, "after export and import");
}

async fn run_cypher(graph: &neo4rs::Graph, text: &str) {
    let mut rows = graph.execute(neo4rs::query(text)).await.expect("statement");
    while rows.next().await.expect("row").is_some() {}
}

#[tokio::test]
async fn a_version_2_database_gets_its_catalog_relationships_and_a_jobs_backfill_note() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let cat = catalog(&neo).await;
    let graph = raw_graph().await;
    let counts = relationship_counts(&graph).await;
    assert_eq!((counts.get("CONTAINS"), counts.get("HAS_FIELD")), (Some(&3), Some(&6)), "new writes link the catalog");
    // A database as version 2 left it: no catalog relationships, no note, version 2. One container
    // is deleted (soft) and keeps its link; another's datastore is gone.
    neo.delete_container(cat.containers[2].id).await.expect("delete");
    let orphan = neo.upsert_datastore(datastore_input("gone")).await.expect("ds");
    neo.upsert_container(container_input(orphan.id, "orphan", &["z"])).await.expect("orphan");
    run_cypher(&graph, "MATCH (d:Datastore {name: 'gone'}) DETACH DELETE d").await;
    run_cypher(&graph, "MATCH ()-[r:CONTAINS|HAS_FIELD]->() DELETE r").await;
    run_cypher(&graph, "MATCH (d:Doc {kind: 'meta'}) DELETE d").await;
    run_cypher(&graph, "MATCH (s:TributarySchema) SET s.version = 2").await;

    let uri = std::env::var("NEO4J_URI").expect("NEO4J_URI");
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".to_string());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".to_string());
    let migrated = Neo4jStore::connect(&uri, &user, &password, None).await.expect("migrate");
    let counts = relationship_counts(&graph).await;
    assert_eq!(counts.get("CONTAINS"), Some(&3), "every container whose datastore exists: {counts:?}");
    assert_eq!(counts.get("HAS_FIELD"), Some(&7), "every field, the orphan container's too: {counts:?}");
    assert_eq!(
        migrated.get_doc("meta", "jobs_backfill").await.expect("doc"),
        Some(json!({"pending": true})),
        "the service backfills jobs and runs at its next start"
    );
    let mut rows =
        graph.execute(neo4rs::query("MATCH (s:TributarySchema) RETURN s.version AS v")).await.expect("version");
    let row = rows.next().await.expect("row").expect("a version node");
    assert_eq!(row.get::<i64>("v").expect("v"), tributary::store::neo4j::SCHEMA_VERSION);
    // A new store's path and the migrated one agree: connecting again changes nothing.
    drop(Neo4jStore::connect(&uri, &user, &password, None).await.expect("connect again"));
    assert_eq!(relationship_counts(&graph).await, counts);
}

/// The Cypher examples of README.md: `<!-- cypher-example: NAME -->` followed by a ```cypher
/// block, by name.
fn readme_cypher_examples() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README");
    let mut out = Vec::new();
    for piece in readme.split("<!-- cypher-example: ").skip(1) {
        let (name, rest) = piece.split_once(" -->").expect("a closed marker");
        let block = rest.trim_start().strip_prefix("```cypher\n").expect("a cypher block after the marker");
        let (text, _) = block.split_once("```").expect("a closed cypher block");
        out.push((name.to_string(), text.to_string()));
    }
    out
}

#[tokio::test]
async fn the_readme_cypher_examples_answer_as_they_say() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let ds = neo.upsert_datastore(datastore_input("warehouse")).await.expect("ds");
    let typed = |name: &str, data_type: &str| FieldInput {
        name: name.to_string(),
        data_type: Some(data_type.to_string()),
        ..FieldInput::default()
    };
    let mut clean = container_input(ds.id, "orders_clean", &[]);
    clean.fields = vec![typed("id", "bigint"), typed("amount", "numeric")];
    let (clean, _) = neo.upsert_container(clean).await.expect("orders_clean");
    let (orders, _) = neo.upsert_container(container_input(ds.id, "orders", &["id"])).await.expect("orders");
    let (gone, _) = neo.upsert_container(container_input(ds.id, "gone", &[])).await.expect("gone");
    neo.delete_container(gone.id).await.expect("delete");
    let ok = "3f0c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90";
    let raw = x("s3://raw/orders");
    let mut failed = run_event("clean_orders", "r-failed", "FAIL", 100, Vec::new());
    if let Some(run) = failed.run.as_mut() {
        run.error_message = Some("division by zero".to_string());
    }
    for record in [
        run_event(
            "clean_orders",
            ok,
            "START",
            0,
            vec![io(IoDirection::Read, c(orders.id), "orders", t(0)), io(IoDirection::Read, raw, "raw/orders", t(0))],
        ),
        run_event("clean_orders", ok, "COMPLETE", 10, vec![io(IoDirection::Wrote, c(clean.id), "orders_clean", t(10))]),
        run_event(
            "clean_orders",
            "r-failed",
            "START",
            90,
            vec![io(IoDirection::Wrote, c(clean.id), "orders_clean", t(90))],
        ),
        failed,
        run_event("audit", "r-audit", "ABORT", 50, vec![io(IoDirection::Read, c(clean.id), "orders_clean", t(50))]),
    ] {
        neo.record_run(record).await.expect("record_run");
    }
    let ts = |s: i64| json!(t(s).to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
    let expected: Vec<(&str, serde_json::Value)> = vec![
        (
            "jobs-writing-a-table",
            json!([{"namespace": "airflow", "job": "clean_orders", "last_written": ts(90), "last_completed": ts(10)}]),
        ),
        (
            "failed-runs",
            json!([
                {"job": "clean_orders", "run": "r-failed", "state": "FAIL", "ended": ts(100), "error": "division by zero"},
                {"job": "audit", "run": "r-audit", "state": "ABORT", "ended": ts(50), "error": null},
            ]),
        ),
        (
            "run-io",
            json!([
                {"how": "READ", "dataset": "orders", "at": ts(0)},
                {"how": "READ", "dataset": "s3://raw/orders", "at": ts(0)},
                {"how": "WROTE", "dataset": "orders_clean", "at": ts(10)},
            ]),
        ),
        ("table-fields", json!([{"field": "amount", "type": "numeric"}, {"field": "id", "type": "bigint"}])),
        (
            "datastore-tables",
            json!([
                {"database": "db", "schema": "public", "table": "orders"},
                {"database": "db", "schema": "public", "table": "orders_clean"},
            ]),
        ),
    ];
    let examples = readme_cypher_examples();
    let names: Vec<&str> = examples.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, expected.iter().map(|(n, _)| *n).collect::<Vec<_>>(), "the README's examples");
    let graph = raw_graph().await;
    for ((name, text), (_, want)) in examples.iter().zip(expected) {
        let mut rows = graph.execute(neo4rs::query(text)).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut got = Vec::new();
        while let Some(row) = rows.next().await.unwrap_or_else(|e| panic!("{name}: {e}")) {
            got.push(row.to::<serde_json::Value>().unwrap_or_else(|e| panic!("{name}: {e}")));
        }
        assert_eq!(serde_json::Value::from(got), want, "README example {name}");
    }
}

#[tokio::test]
async fn concurrent_events_of_one_new_job_and_run_record_them_once() {
    let _serial = SERIAL.lock().await;
    let Some(neo) = store().await else { return };
    let cat = catalog(&neo).await;
    let neo = std::sync::Arc::new(neo);
    let (a, b) = (c(cat.containers[0].id), c(cat.containers[1].id));
    let events = [
        run_event("etl", "r-1", "START", 0, vec![io(IoDirection::Read, a.clone(), "a", t(0))]),
        run_event("etl", "r-1", "RUNNING", 5, vec![io(IoDirection::Read, a, "a", t(5))]),
        run_event("etl", "r-1", "COMPLETE", 10, vec![io(IoDirection::Wrote, b, "b", t(10))]),
        run_event("etl", "r-2", "START", 20, Vec::new()),
    ];
    let tasks: Vec<_> = events
        .into_iter()
        .map(|record| {
            let neo = neo.clone();
            tokio::spawn(async move { neo.record_run(record).await })
        })
        .collect();
    for task in tasks {
        task.await.expect("join").expect("every event is recorded");
    }
    let jobs = neo.list_jobs(&JobFilter::default(), page(1, 10)).await.expect("jobs");
    assert_eq!(jobs.total, 1, "one job: {:?}", jobs.items);
    let runs = neo.runs_of_job(jobs.items[0].id, &RunFilter::default(), page(1, 10)).await.expect("runs");
    assert_eq!(runs.items.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(), ["r-2", "r-1"]);
    assert_eq!(jobs.items[0].latest_run_id, Some(runs.items[0].id));
    let r1 = &runs.items[1];
    assert_eq!((r1.state.as_str(), r1.states.len()), ("COMPLETE", 3));
    assert_eq!(neo.run_io(&[r1.id]).await.expect("io").len(), 2);
}

/// A session (one transaction across many calls): its reads see its own writes and no one
/// else does until it commits; a write that fails fails the whole session (Neo4j has no
/// savepoints): nothing of it commits and later calls are refused; a session dropped without
/// committing leaves nothing, and the store takes writes again at once.
#[tokio::test]
async fn a_session_commits_together_and_a_failed_write_fails_it_whole() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let ds = store.upsert_datastore(datastore_input("wh")).await.expect("datastore");
    let a = store.upsert_container(container_input(ds.id, "a", &[])).await.expect("a").0.id;
    let b = store.upsert_container(container_input(ds.id, "b", &[])).await.expect("b").0.id;
    let edge = |source: Id, target: Id| new_edge(c(source), c(target), "user");

    let session = store.session().await.expect("session").expect("the Neo4j store has sessions");
    assert!(store.session_conflicts(), "a concurrent writer can fail a Neo4j session");
    assert!(session.session().await.expect("nested").is_none(), "a session does not nest");
    session.put_doc("note", "a", serde_json::json!(1)).await.expect("put in session");
    let created = session.create_edges(vec![edge(a, b)], false, t(0)).await.expect("edge in session");
    assert_eq!(session.get_doc("note", "a").await.expect("read"), Some(serde_json::json!(1)), "it reads its writes");
    assert_eq!(session.edges_by_ids(&[created[0].id]).await.expect("read").len(), 1, "its batched reads too");
    assert_eq!(store.get_doc("note", "a").await.expect("read"), None, "others do not see them before the commit");
    // Catalog reads run beside the session until it writes the catalog; then they see its writes.
    let names = ["c".to_string()];
    assert!(session.containers_by_names(&names, None).await.expect("read").is_empty());
    let made = session.upsert_container(container_input(ds.id, "c", &["x"])).await.expect("container in session");
    let found = session.containers_by_names(&names, None).await.expect("read");
    assert_eq!(found.iter().map(|c| c.id).collect::<Vec<_>>(), [made.0.id], "it reads the container it created");
    let fields = session.fields_of_containers(&[made.0.id]).await.expect("read");
    assert_eq!(fields.len(), 1, "and its fields");
    assert!(store.containers_by_names(&names, None).await.expect("read").is_empty(), "others do not");
    session.commit_session().await.expect("commit");
    assert_eq!(store.get_doc("note", "a").await.expect("read"), Some(serde_json::json!(1)));
    assert_eq!(store.edges_by_ids(&[created[0].id]).await.expect("read").len(), 1);
    assert!(
        session.put_doc("note", "late", serde_json::json!(2)).await.is_err(),
        "a committed session takes no more calls"
    );

    let failing = store.session().await.expect("session").expect("a session");
    failing.put_doc("note", "b", serde_json::json!(2)).await.expect("put in session");
    // The same edge again: the uniqueness constraint fails the statement, and with it the session.
    assert!(failing.create_edges(vec![edge(a, b)], false, t(1)).await.is_err());
    assert!(failing.put_doc("note", "c", serde_json::json!(3)).await.is_err(), "a failed session takes no more calls");
    assert!(failing.commit_session().await.is_err(), "a failed session does not commit");
    assert_eq!(store.get_doc("note", "b").await.expect("read"), None, "nothing of a failed session stays");

    let dropped = store.session().await.expect("session").expect("a session");
    dropped.put_doc("note", "d", serde_json::json!(4)).await.expect("put in session");
    drop(dropped);
    // Written at once, not after the dropped session's locks time out.
    store.put_doc("note", "d", serde_json::json!(5)).await.expect("put after a dropped session");
    assert_eq!(store.get_doc("note", "d").await.expect("read"), Some(serde_json::json!(5)));
}

/// An open session holds no id counter: a second process writing the same kinds of rows (a
/// second `serve` replica on the same database) gets its ids at once instead of waiting for the
/// session to commit, and no id is handed out twice. Taking ids inside the writing transaction
/// held each counter's lock until commit, so the second writer waited for the session's end (up
/// to 2 s of ingest) and, holding locks of its own, deadlocked with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_session_holds_no_id_counter_another_replica_waits_for() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let replica = connect_again().await;
    let ds = store.upsert_datastore(datastore_input("wh")).await.expect("datastore");
    let a = store.upsert_container(container_input(ds.id, "a", &[])).await.expect("a").0.id;

    // The session creates a container, a field and an edge, and stays open.
    let session = store.session().await.expect("session").expect("the Neo4j store has sessions");
    let (s, s_fields) = session.upsert_container(container_input(ds.id, "s", &["x"])).await.expect("in session");
    let s_edge = session.create_edges(vec![new_edge(c(a), c(s.id), "user")], false, t(0)).await.expect("edge");

    // Meanwhile the other process creates the same kinds of rows in a datastore of its own.
    let other = async {
        let ds2 = replica.upsert_datastore(datastore_input("other")).await.expect("datastore");
        let (t1, t1_fields) = replica.upsert_container(container_input(ds2.id, "t1", &["y"])).await.expect("t1");
        let t2 = replica.upsert_container(container_input(ds2.id, "t2", &[])).await.expect("t2").0;
        let edge = replica.create_edges(vec![new_edge(c(t1.id), c(t2.id), "user")], false, t(0)).await.expect("edge");
        (vec![t1.id, t2.id], t1_fields[0].id, edge[0].id)
    };
    // A bound on waiting, not a speed check: waiting for a counter the session holds never ends
    // while the session is open.
    let (containers, field, edge) = tokio::time::timeout(std::time::Duration::from_secs(20), other)
        .await
        .expect("the other process's writes waited for the open session");
    session.commit_session().await.expect("commit");

    assert!(!containers.contains(&s.id), "container ids never collide: {containers:?} and {}", s.id);
    assert_ne!(field, s_fields[0].id, "field ids never collide");
    assert_ne!(edge, s_edge[0].id, "edge ids never collide");
    // Both processes' rows are there, each with the id its write returned.
    let listed: BTreeSet<Id> = store
        .containers_by_ids(&[s.id, containers[0], containers[1]])
        .await
        .expect("read")
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed, BTreeSet::from([s.id, containers[0], containers[1]]));
    assert_eq!(store.edges_by_ids(&[edge, s_edge[0].id]).await.expect("read").len(), 2);
}

/// A request of 1,000 OpenLineage events on Neo4j, every one with lineage and column lineage
/// between tables the store has, costs at most 40 statements all told (issue #44): one
/// session whose prior state, read-aheads and writes are a statement per kind, and ids reserved
/// in blocks that grow while a counter is in heavy use. Then the same jobs' second runs, which
/// re-assert what the first ones wrote, cost as few.
#[tokio::test]
async fn a_thousand_event_request_is_a_few_statements() {
    let _serial = SERIAL.lock().await;
    let Some(store) = store().await else { return };
    let store = std::sync::Arc::new(store);
    let lineage = tributary::service::Lineage::new(store.clone())
        .with_zero_setup(true)
        // The debug build's events alone can take the default 2 s: one session, whatever the build.
        .with_ingest_session_time(std::time::Duration::from_secs(600));
    let schema: Vec<_> = (0..3).map(|f| json!({"name": format!("c{f}"), "type": "int"})).collect();
    let events = |round: usize| -> Vec<serde_json::Value> {
        let at = Utc::now() - Duration::minutes(10 - round as i64);
        (0..500)
            .flat_map(|r| {
                let run = format!("00000000-0000-4000-8000-{:06}{:06}", round, r);
                let (input, output) = (format!("db.public.src{}", r % 20), format!("db.public.out{}", r % 50));
                let fields: serde_json::Map<String, serde_json::Value> = (0..3)
                    .map(|f| {
                        let from = json!({"inputFields": [{"namespace": "postgres://db:5432", "name": input, "field": format!("c{f}")}]});
                        (format!("c{f}"), from)
                    })
                    .collect();
                let schema = schema.clone();
                ["START", "COMPLETE"].into_iter().enumerate().map(move |(phase, kind)| {
                    json!({
                        "eventType": kind,
                        "eventTime": (at + Duration::milliseconds((2 * r + phase) as i64)).to_rfc3339(),
                        "producer": "https://example.com/producer",
                        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                        "run": {"runId": run},
                        "job": {"namespace": "etl", "name": format!("job{}", r % 50)},
                        "inputs": [{"namespace": "postgres://db:5432", "name": input,
                                    "facets": {"schema": {"fields": schema.clone()}}}],
                        "outputs": [{"namespace": "postgres://db:5432", "name": output, "facets": {
                            "schema": {"fields": schema.clone()},
                            "columnLineage": {"fields": fields.clone()}}}],
                    })
                })
                .collect::<Vec<_>>()
            })
            .collect()
    };
    let caller = tributary::auth::Caller::system();
    // The tables first, each the output of a job of its own (the counted requests then resolve
    // to them, as a deployment's producers meet tables the catalog has).
    let tables: Vec<serde_json::Value> = (0..20)
        .map(|i| format!("db.public.src{i}"))
        .chain((0..50).map(|i| format!("db.public.out{i}")))
        .enumerate()
        .map(|(i, name)| {
            json!({
                "eventType": "COMPLETE",
                "eventTime": (Utc::now() - Duration::minutes(30)).to_rfc3339(),
                "producer": "https://example.com/producer",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                "run": {"runId": format!("00000000-0000-4000-8000-9999999{i:05}")},
                "job": {"namespace": "etl", "name": format!("make{i}")},
                "inputs": [],
                "outputs": [{"namespace": "postgres://db:5432", "name": name, "facets": {"schema": {"fields": schema.clone()}}}],
            })
        })
        .collect();
    let report = lineage.ingest_openlineage(&caller, tables).await.expect("tables");
    assert!(report.events.iter().all(|e| e.status == "recorded" || e.status == "applied"), "{:?}", report.events[0]);
    for round in 0..2 {
        let before = store_queries_total("neo4j");
        let report = lineage.ingest_openlineage(&caller, events(round)).await.expect("ingest");
        let statements = store_queries_total("neo4j") - before;
        assert_eq!(report.events.len(), 1_000);
        let applied = report.events.iter().filter(|e| e.status == "applied").count();
        assert_eq!(applied, 1_000, "round {round}: {:?}", report.events.iter().find(|e| e.status != "applied"));
        assert!(statements <= 40, "round {round}: 1,000 events took {statements} statements");
    }
    // What they wrote: run r copies src(r % 20) into out(r % 50), a pair that repeats every
    // lcm(20, 50) = 100 runs, so 100 table edges (two inputs an output), column by column.
    let edges = all_edges(&*store).await;
    let fields = edges.iter().filter(|e| matches!(e.source, End::Field { .. })).count();
    assert_eq!(edges.len() - fields, 100, "table edges: one per (r % 20, r % 50) pair");
    assert_eq!(fields, 3 * 100, "field edges: three columns of each table edge");
}
