//! Traversals answer with every committed write: a level's edges may come from the embedded
//! store's kept lists (`store/sqlite/adjacency.rs`), which must never outlive a change. Each
//! query here follows a write that changes the edges an earlier answer read, upstream and
//! downstream, container and field edges, today and as of an instant (picked from the same
//! lists). (Writes from another process: `tests/cli.rs`,
//! `serve_traversals_see_what_another_process_wrote`.)

use serde_json::{json, Value};
use tributary::domain::End;

use crate::both_stores;
use crate::catalog::openlineage_edge;
use crate::common::TestApp;

both_stores!(traversals_answer_with_each_committed_write);

/// The ids `impact` (both directions) and `piiFlow` (downstream) reach from `c` and `f` today.
async fn reached(app: &TestApp, c: i64, f: i64) -> [Vec<i64>; 3] {
    reached_at(app, c, f, Value::Null).await
}

/// `reached` as of `at` (today when null).
async fn reached_at(app: &TestApp, c: i64, f: i64, at: Value) -> [Vec<i64>; 3] {
    let v = app
        .ok(
            "query($c: Int!, $f: Int!, $at: DateTime) {
               down: impact(containerId: $c, depth: 5, asOf: $at) { containers { container { id } } }
               up: impact(containerId: $c, depth: 5, side: UPSTREAM, asOf: $at) { containers { container { id } } }
               pii: piiFlow(fieldId: $f, depth: 5, asOf: $at) { fields { field { id } } } }",
            json!({"c": c, "f": f, "at": at}),
        )
        .await;
    let ids = |list: &Value, item: &str| -> Vec<i64> {
        list.as_array().expect("list").iter().map(|x| x[item]["id"].as_i64().expect("id")).collect()
    };
    [
        ids(&v["down"]["containers"], "container"),
        ids(&v["up"]["containers"], "container"),
        ids(&v["pii"]["fields"], "field"),
    ]
}

async fn traversals_answer_with_each_committed_write(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, af) = app.container(ds, "a", &["email"]).await;
    let (b, bf) = app.container(ds, "b", &["email"]).await;
    let (c, cf) = app.container(ds, "c", &["email"]).await;
    let none: Vec<i64> = Vec::new();
    // Each answer reads the lists the next write changes.
    assert_eq!(reached(&app, b, bf[0]).await, [none.clone(), none.clone(), none.clone()]);
    // A provider's edges (retired when deleted, so an earlier instant still shows them).
    let ab = openlineage_edge(&app, End::Container { id: a }, End::Container { id: b }).await;
    let fab =
        openlineage_edge(&app, End::Field { id: af[0], container_id: a }, End::Field { id: bf[0], container_id: b })
            .await;
    assert_eq!(reached(&app, b, bf[0]).await, [none.clone(), vec![a], none.clone()]);
    assert_eq!(reached(&app, a, af[0]).await, [vec![b], none.clone(), vec![bf[0]]]);
    app.edge(b, c).await;
    app.field_edge(bf[0], cf[0]).await;
    assert_eq!(reached(&app, a, af[0]).await, [vec![b, c], none.clone(), vec![bf[0], cf[0]]]);
    assert_eq!(reached(&app, c, cf[0]).await, [none.clone(), vec![b, a], none.clone()]);
    // An instant between the edges' creation and their deletion, on this process's clock.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let before = json!(chrono::Utc::now().to_rfc3339());
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    for id in [ab, fab] {
        app.ok("mutation($id: Int!) { deleteEdge(id: $id) }", json!({"id": id})).await;
    }
    assert_eq!(reached(&app, a, af[0]).await, [none.clone(), none.clone(), none.clone()]);
    assert_eq!(reached(&app, c, cf[0]).await, [none.clone(), vec![b], none.clone()]);
    // As of before the deletion, from the lists the answers above read: the retired edges count.
    assert_eq!(reached_at(&app, a, af[0], before.clone()).await, [vec![b, c], none.clone(), vec![bf[0], cf[0]]]);
    assert_eq!(reached_at(&app, c, cf[0], before).await, [none.clone(), vec![b, a], none.clone()]);
    // A container deleted takes its edges with it.
    app.ok("mutation($id: Int!) { deleteContainer(id: $id) }", json!({"id": b})).await;
    assert_eq!(reached(&app, c, cf[0]).await, [none.clone(), none.clone(), none]);
}
