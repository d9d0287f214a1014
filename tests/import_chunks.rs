//! `Store::import_chunks` (issue #22's xlarge size loads through it) on both stores: a store
//! exported and imported back a few records at a time is the same store, ids continue past the
//! imported ones, a non-empty store is refused untouched, and a failure in a later chunk leaves
//! the store empty. Neo4j cases need `NEO4J_URI` (`scripts/test` starts one), or
//! `TRIBUTARY_SKIP_NEO4J=1` to skip them on purpose.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/skip_neo4j.rs"]
mod skip_neo4j;

use std::sync::Arc;

use tributary::domain::{ContainerInput, DatastoreInput, End, FieldInput, NewEdge, Timestamp};
use tributary::store::neo4j::Neo4jStore;
use tributary::store::sqlite::SqliteStore;
use tributary::store::{Record, Store, StoreError};

/// Sends `records` to `store.import_chunks`, `size` at a time, as a producer task would.
async fn import_in_chunks(store: &dyn Store, records: Vec<Record>, size: usize) -> Result<usize, StoreError> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let producer = tokio::spawn(async move {
        for chunk in records.chunks(size) {
            // The import stops reading when it fails; its error is what the test checks.
            if tx.send(chunk.to_vec()).await.is_err() {
                break;
            }
        }
    });
    let out = store.import_chunks(rx).await;
    producer.await.unwrap();
    out
}

fn t(seconds: i64) -> Timestamp {
    chrono::DateTime::from_timestamp(1_714_564_800 + seconds, 0).unwrap()
}

fn container_input(datastore_id: i64, name: &str, fields: &[&str]) -> ContainerInput {
    ContainerInput {
        datastore_id,
        name: name.to_string(),
        database: Some("db".to_string()),
        schema: Some("public".to_string()),
        fields: fields.iter().map(|f| FieldInput { name: f.to_string(), ..FieldInput::default() }).collect(),
        ..ContainerInput::default()
    }
}

fn new_edge(source: End, target: End) -> NewEdge {
    NewEdge {
        source,
        target,
        description: None,
        source_type: "manual".to_string(),
        operation: None,
        derived: None,
        transformations: None,
        last_asserted_at: None,
    }
}

/// A small catalog with container and field edges, made through the store's own writes.
async fn fill(store: &dyn Store) {
    let ds = store
        .upsert_datastore(DatastoreInput {
            name: "wh".to_string(),
            kind: "postgresql".to_string(),
            store_type: None,
            namespaces: vec!["postgres://wh:5432".to_string()],
            enrichment_only: false,
        })
        .await
        .expect("datastore");
    let mut made = Vec::new();
    for name in ["a", "b", "c", "d"] {
        made.push(store.upsert_container(container_input(ds.id, name, &["id", "x", "y"])).await.expect("container"));
    }
    let mut edges = Vec::new();
    for w in made.windows(2) {
        let (s, t) = (&w[0], &w[1]);
        edges.push(new_edge(End::Container { id: s.0.id }, End::Container { id: t.0.id }));
        for (sf, tf) in s.1.iter().zip(&t.1) {
            edges.push(new_edge(
                End::Field { id: sf.id, container_id: s.0.id },
                End::Field { id: tf.id, container_id: t.0.id },
            ));
        }
    }
    store.create_edges(edges, false, t(10)).await.expect("edges");
}

/// The cases, on a store `fresh` empties and hands out again.
async fn cases<S: Store + 'static>(fresh: impl AsyncFn() -> Arc<S>) {
    let store = fresh().await;
    fill(store.as_ref()).await;
    let exported = store.export().await.expect("export");
    assert!(exported.len() > 20, "{} records", exported.len());

    // A non-empty store is refused and keeps what it had.
    match import_in_chunks(store.as_ref(), exported.clone(), 3).await {
        Err(StoreError::Invalid(m)) => assert!(m.to_lowercase().contains("empty"), "{m}"),
        other => panic!("import into a non-empty store must be Invalid, got {other:?}"),
    }
    assert_eq!(store.export().await.expect("export"), exported);

    // Three records a chunk: the same store again, and new ids continue past the imported ones.
    let store = fresh().await;
    assert_eq!(import_in_chunks(store.as_ref(), exported.clone(), 3).await.expect("import"), exported.len());
    assert_eq!(store.export().await.expect("export"), exported);
    let max_container = exported
        .iter()
        .filter_map(|r| match r {
            Record::Container(c) => Some(c.id),
            _ => None,
        })
        .max()
        .unwrap();
    let ds = store.list_datastores().await.expect("datastores")[0].id;
    let (e, _) = store.upsert_container(container_input(ds, "e", &["id"])).await.expect("new container");
    assert!(e.id > max_container, "{} after {max_container}", e.id);

    // A container repeated in the last chunk fails the import after the first chunks were
    // written: nothing stays.
    let store = fresh().await;
    let mut bad = exported.clone();
    let first = exported.iter().find(|r| matches!(r, Record::Container(_))).unwrap().clone();
    bad.push(first);
    match import_in_chunks(store.as_ref(), bad, 4).await {
        Err(StoreError::Invalid(_)) => {}
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(store.export().await.expect("export").is_empty(), "a failed import leaves the store empty");
}

#[tokio::test]
async fn chunked_import_on_the_embedded_store() {
    // Each store lives in its own directory, kept until the test ends.
    let dirs = std::sync::Mutex::new(Vec::new());
    cases(async || {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Arc::new(SqliteStore::open(dir.path()).expect("open"));
        dirs.lock().unwrap().push(dir);
        store
    })
    .await;
}

#[tokio::test]
async fn chunked_import_on_neo4j() {
    let Some(uri) = skip_neo4j::neo4j_uri_or_skip() else { return };
    let user = std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".to_string());
    let password = std::env::var("NEO4J_PASSWORD").unwrap_or_else(|_| "neo4j".to_string());
    let store = Arc::new(Neo4jStore::connect(&uri, &user, &password, None).await.expect("connect"));
    cases(async || {
        store.wipe().await.expect("wipe");
        store.clone()
    })
    .await;
}
