//! The change feed: `changes` pages through the store's change log in commit order with an
//! opaque cursor, across a restart, with nothing skipped or repeated; the `containerId` filter;
//! cursor errors; retention; and the backfill of a store made before the log existed.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use tributary::domain::{End, NewEdge};

use crate::common::TestApp;

const PAGE: &str = "query($after: String, $first: Int, $c: Int) {
  changes(after: $after, first: $first, containerId: $c) {
    endCursor hasMore
    items { cursor kind at edgeId fieldId containerIds detail edge { id retiredAt } }
  }
}";

fn field_edge(source: i64, target: i64, source_container: i64, target_container: i64) -> NewEdge {
    NewEdge {
        source: End::Field { id: source, container_id: source_container },
        target: End::Field { id: target, container_id: target_container },
        description: None,
        source_type: "manual".into(),
        operation: None,
        derived: None,
        transformations: None,
        last_asserted_at: None,
    }
}

/// Reads pages of `first` from `after` until one says there is no more; returns the items and
/// the last end cursor.
async fn read_all(app: &TestApp, mut after: Option<String>, first: i64, pages: Option<usize>) -> (Vec<Value>, String) {
    let mut items = Vec::new();
    let mut read = 0;
    loop {
        let d = app.ok(PAGE, json!({"after": after, "first": first})).await;
        let page = &d["changes"];
        let got = page["items"].as_array().unwrap().clone();
        assert!(got.len() as i64 <= first);
        items.extend(got);
        after = Some(page["endCursor"].as_str().unwrap().to_string());
        read += 1;
        if !page["hasMore"].as_bool().unwrap() || pages.is_some_and(|p| read == p) {
            return (items, after.unwrap());
        }
    }
}

fn count_kind(items: &[Value], kind: &str) -> usize {
    items.iter().filter(|i| i["kind"] == kind).count()
}

async fn a_thousand_changes_page_through_a_restart_with_no_gap_or_repeat(app: TestApp) {
    let ds = app.datastore("warehouse", "postgresql").await;
    let names: Vec<String> = (0..300).map(|i| format!("col_{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (a, a_fields) = app.container(ds, "orders", &names).await;
    let (b, b_fields) = app.container(ds, "orders_clean", &names).await;
    let now = tributary::domain::now();
    let edges: Vec<NewEdge> = a_fields.iter().zip(&b_fields).map(|(s, t)| field_edge(*s, *t, a, b)).collect();
    let created = app.store.create_edges(edges, false, now).await.unwrap();
    let retired: Vec<i64> = created.iter().take(98).map(|e| e.id).collect();
    app.store.retire_edges(&retired, tributary::domain::now()).await.unwrap();
    // 2 containers + 600 fields + 300 edges asserted + 98 retired.

    let (first_half, cursor) = read_all(&app, None, 100, Some(5)).await;
    assert_eq!(first_half.len(), 500);
    // More changes commit while the reader is away, then the service restarts.
    let more = app
        .store
        .create_edges(vec![field_edge(b_fields[0], a_fields[1], b, a)], false, tributary::domain::now())
        .await
        .unwrap();
    let app = app.reopened().await;
    let (second_half, end) = read_all(&app, Some(cursor), 100, None).await;

    let all: Vec<Value> = first_half.into_iter().chain(second_half).collect();
    assert_eq!(all.len(), 1001, "every change once");
    let cursors: Vec<&str> = all.iter().map(|i| i["cursor"].as_str().unwrap()).collect();
    assert_eq!(cursors.iter().collect::<BTreeSet<_>>().len(), 1001, "no change twice");
    assert_eq!(count_kind(&all, "CONTAINER_CREATED"), 2);
    assert_eq!(count_kind(&all, "FIELD_CREATED"), 600);
    assert_eq!(count_kind(&all, "EDGE_ASSERTED"), 301);
    assert_eq!(count_kind(&all, "EDGE_RETIRED"), 98);
    // In commit order: the catalog, the edges, the retirements, the edge added while away.
    let asserted: Vec<i64> =
        all.iter().filter(|i| i["kind"] == "EDGE_ASSERTED").map(|i| i["edgeId"].as_i64().unwrap()).collect();
    let mut expected: Vec<i64> = created.iter().map(|e| e.id).collect();
    expected.push(more[0].id);
    assert_eq!(asserted, expected);
    let retired_seen: Vec<i64> =
        all.iter().filter(|i| i["kind"] == "EDGE_RETIRED").map(|i| i["edgeId"].as_i64().unwrap()).collect();
    assert_eq!(retired_seen.iter().collect::<BTreeSet<_>>(), retired.iter().collect::<BTreeSet<_>>());
    assert_eq!(all[1000]["edgeId"], json!(more[0].id));
    assert_eq!(all[1000]["containerIds"], json!([b, a]));
    let times: Vec<&str> = all.iter().map(|i| i["at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "times follow positions");
    // A retired edge's change shows the edge as it is now.
    let r = all.iter().find(|i| i["kind"] == "EDGE_RETIRED").unwrap();
    assert!(r["edge"]["retiredAt"].is_string(), "{r}");

    // At the head: an empty page keeps the cursor, and the next change follows it.
    let d = app.ok(PAGE, json!({"after": end, "first": 10})).await;
    assert_eq!(d["changes"]["items"], json!([]));
    assert_eq!(d["changes"]["endCursor"], json!(end));
    assert_eq!(d["changes"]["hasMore"], json!(false));
    app.ok("mutation($id: Int!) { deleteField(id: $id) }", json!({"id": a_fields[299]})).await;
    // The field's manual edge goes with it, then the field.
    let d = app.ok(PAGE, json!({"after": end, "first": 10})).await;
    let items = d["changes"]["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["EDGE_DELETED", "FIELD_DROPPED"]);
    assert_eq!(items[0]["edgeId"], json!(created[299].id));
    assert_eq!(items[0]["edge"], Value::Null, "a deleted edge is gone");
    assert_eq!(items[1]["fieldId"], json!(a_fields[299]));
    assert_eq!(items[1]["containerIds"], json!([a]));
}

/// Three tables a -> b -> c in one datastore: (datastore, containers, edges).
async fn chain(app: &TestApp) -> (i64, [i64; 3], [i64; 2]) {
    let ds = app.datastore("warehouse", "postgresql").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    let (c, _) = app.container(ds, "c", &[]).await;
    (ds, [a, b, c], [app.edge(a, b).await, app.edge(b, c).await])
}

async fn changes_filter_by_container_and_refuse_bad_arguments(app: TestApp) {
    let (_, [a, b, c], [ab, bc]) = chain(&app).await;
    app.ok(
        "mutation($id: Int!) { updateEdge(id: $id, input: {sourceType: \"inferred\", description: \"checked\"}) { id } }",
        json!({"id": ab}),
    )
    .await;
    app.ok("mutation($id: Int!) { deleteEdge(id: $id) }", json!({"id": bc})).await;
    app.ok("mutation($id: Int!) { deleteContainer(id: $id) }", json!({"id": c})).await;

    let of = |id: i64| {
        let app = &app;
        async move {
            let d = app.ok(PAGE, json!({"c": id, "first": 100})).await;
            d["changes"]["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| (i["kind"].as_str().unwrap().to_string(), i["edgeId"].as_i64()))
                .collect::<Vec<_>>()
        }
    };
    let k = |kind: &str, edge: Option<i64>| (kind.to_string(), edge);
    assert_eq!(
        of(a).await,
        vec![k("CONTAINER_CREATED", None), k("EDGE_ASSERTED", Some(ab)), k("EDGE_RELABELLED", Some(ab))]
    );
    assert_eq!(
        of(c).await,
        vec![
            k("CONTAINER_CREATED", None),
            k("EDGE_ASSERTED", Some(bc)),
            k("EDGE_DELETED", Some(bc)),
            k("CONTAINER_DROPPED", None)
        ]
    );
    assert_eq!(of(b).await.len(), 5);
    let d = app.ok(PAGE, json!({"c": a, "first": 100})).await;
    let relabel = &d["changes"]["items"][2];
    assert_eq!(
        relabel["detail"],
        json!({"sourceType": {"from": "manual", "to": "inferred"}, "description": {"from": null, "to": "checked"}})
    );
    assert_eq!(relabel["edge"]["id"], json!(ab));

    let (code, message) = app.err(PAGE, json!({"after": "not-a-cursor"})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    assert!(message.starts_with("after: \"not-a-cursor\" is not a change cursor"), "{message}");
    let (code, message) = app.err(PAGE, json!({"first": 0})).await;
    assert_eq!((code.as_str(), message.as_str()), ("BAD_USER_INPUT", "first must be between 1 and 1000, got 0"));
    let (code, _) = app.err(PAGE, json!({"first": 1001})).await;
    assert_eq!(code, "BAD_USER_INPUT");
}

/// Retention deletes old changes; positions are never handed out again, and a log emptied by
/// retention is not backfilled again at the next start.
async fn retention_purges_changes_and_positions_go_on(app: TestApp) {
    let ds = app.datastore("warehouse", "postgresql").await;
    let (a, _) = app.container(ds, "a", &[]).await;
    let (b, _) = app.container(ds, "b", &[]).await;
    app.edge(a, b).await;
    let (before, _) = read_all(&app, None, 100, None).await;
    assert_eq!(before.len(), 3);
    let purged = app.store.purge_changes(tributary::domain::now() + chrono::Duration::seconds(1)).await.unwrap();
    assert_eq!(purged, 3);
    let app = app.reopened().await;
    let (after_purge, _) = read_all(&app, None, 100, None).await;
    assert_eq!(after_purge, Vec::<Value>::new(), "a purged log is not backfilled again");
    app.container(ds, "c", &[]).await;
    let (now, _) = read_all(&app, None, 100, None).await;
    assert_eq!(now.len(), 1);
    // A cursor from before the purge still reads on: nothing after it was lost.
    let d = app.ok(PAGE, json!({"after": before[2]["cursor"], "first": 10})).await;
    assert_eq!(d["changes"]["items"][0]["cursor"], now[0]["cursor"]);
    assert!(!before.iter().any(|i| i["cursor"] == now[0]["cursor"]), "positions are not reused");
}

/// Drops the change log as a store made before it would lack it.
async fn drop_change_log(app: &TestApp, dir: Option<&std::path::Path>) {
    match dir {
        Some(dir) => {
            let conn = rusqlite::Connection::open(dir.join("tributary.db")).unwrap();
            conn.execute_batch("DROP TABLE changes").unwrap();
        }
        None => {
            let graph = neo4rs::Graph::new(
                std::env::var("NEO4J_URI").unwrap(),
                std::env::var("NEO4J_USER").unwrap_or_else(|_| "neo4j".into()),
                std::env::var("NEO4J_PASSWORD").unwrap_or_default(),
            )
            .await
            .unwrap();
            graph.run(neo4rs::query("MATCH (c:Change) DELETE c")).await.unwrap();
            graph.run(neo4rs::query("MATCH (k:Counter {name: 'change'}) DELETE k")).await.unwrap();
        }
    }
    let _ = app;
}

async fn a_store_made_before_the_change_log_is_backfilled_from_edge_history(app: TestApp) {
    let (ds, [a, b, _], [ab, bc]) = chain(&app).await;
    app.store.retire_edges(&[ab], tributary::domain::now()).await.unwrap();
    let dir = app.data_dir();
    drop_change_log(&app, dir.as_deref()).await;
    let app = app.reopened().await;
    let (all, _) = read_all(&app, None, 100, None).await;
    let seen: Vec<(String, i64)> =
        all.iter().map(|i| (i["kind"].as_str().unwrap().to_string(), i["edgeId"].as_i64().unwrap())).collect();
    // What the edges' history tells, oldest first; the catalog keeps no times to backfill from.
    assert_eq!(seen, vec![("EDGE_ASSERTED".into(), ab), ("EDGE_ASSERTED".into(), bc), ("EDGE_RETIRED".into(), ab)]);
    assert_eq!(all[0]["containerIds"], json!([a, b]));
    // Opening it again backfills nothing more; new changes follow the backfilled ones.
    let app = app.reopened().await;
    app.container(ds, "d", &[]).await;
    let (again, _) = read_all(&app, None, 100, None).await;
    assert_eq!(again.len(), 4);
    assert_eq!(again[3]["kind"], "CONTAINER_CREATED");
}

/// A follower more than `MAX_BACKLOG` changes behind the log's head is told so with the cursor
/// it stands at, and its stream ends; one within the backlog gets the changes it missed.
async fn a_follower_too_far_behind_is_told_where_to_resume(app: TestApp) {
    use futures_util::StreamExt;
    use tributary::service::changes::{encode_cursor, Followed, MAX_BACKLOG};

    let ds = app.datastore("warehouse", "postgresql").await;
    let names: Vec<String> = (0..MAX_BACKLOG + 100).map(|i| format!("c{i}")).collect();
    let fields: Vec<tributary::domain::FieldInput> =
        names.iter().map(|n| tributary::domain::FieldInput { name: n.clone(), ..Default::default() }).collect();
    let (wide, _) = app
        .store
        .upsert_container(tributary::domain::ContainerInput {
            datastore_id: ds,
            name: "wide".into(),
            fields,
            ..Default::default()
        })
        .await
        .unwrap();
    let lineage = tributary::service::Lineage::new(app.store.clone());
    let (first, _) = read_all(&app, None, 1, Some(1)).await;
    let start = first[0]["cursor"].as_str().unwrap().to_string();

    let stream = lineage.follow_changes(wide.id, 1, Some(&start)).await.unwrap();
    let items: Vec<_> = stream.collect().await;
    assert_eq!(items.len(), 1, "one message, then the stream ends");
    match &items[0] {
        Ok(Followed::Behind { cursor, backlog }) => {
            assert_eq!(cursor, &start, "resume where it stood");
            assert!(*backlog > MAX_BACKLOG, "{backlog}");
        }
        other => panic!("{other:?}"),
    }

    // From a cursor within the backlog, it sends what it missed, in order.
    let latest = app.store.latest_change_position().await.unwrap();
    let near = encode_cursor(latest - 3);
    let mut stream = Box::pin(lineage.follow_changes(wide.id, 1, Some(&near)).await.unwrap());
    let mut got = Vec::new();
    while got.len() < 3 {
        match stream.next().await {
            Some(Ok(Followed::Change(item))) => got.push((item.change.position, item.change.change.kind)),
            other => panic!("{other:?}"),
        }
    }
    let kind = tributary::domain::ChangeKind::FieldCreated;
    assert_eq!(got, vec![(latest - 2, kind), (latest - 1, kind), (latest, kind)]);
}

/// Writers commit concurrently while a reader follows the log from its cursor: what the reader
/// collected, read by read, is the whole log in order, so no change ever committed behind a
/// position it had already passed.
async fn a_reader_following_concurrent_writers_misses_nothing(app: TestApp) {
    let ds = app.datastore("warehouse", "postgresql").await;
    let mut containers = Vec::new();
    for i in 0..8 {
        containers.push(app.container(ds, &format!("t{i}"), &[]).await.0);
    }
    let store = app.store.clone();
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (store, source) = (store.clone(), containers[w]);
            tokio::spawn(async move {
                for i in 0..15 {
                    let edge = NewEdge {
                        source: End::Container { id: source },
                        target: End::External { fqn: format!("ext://w{w}/{i}") },
                        ..field_edge(0, 0, 0, 0)
                    };
                    let e = store.create_edges(vec![edge], false, tributary::domain::now()).await.unwrap();
                    store.retire_edges(&[e[0].id], tributary::domain::now()).await.unwrap();
                }
            })
        })
        .collect();
    let mut seen = Vec::new();
    let mut cursor = 0;
    let mut done = false;
    while !done {
        done = writers.iter().all(|w| w.is_finished());
        for c in store.changes_after(cursor, 50, None).await.unwrap() {
            cursor = c.position;
            seen.push(c.position);
        }
    }
    for w in writers {
        w.await.unwrap();
    }
    for c in store.changes_after(cursor, 1000, None).await.unwrap() {
        seen.push(c.position);
    }
    let all: Vec<i64> = store.changes_after(0, 1000, None).await.unwrap().iter().map(|c| c.position).collect();
    assert_eq!(all.len(), 8 + 8 * 15 * 2);
    assert_eq!(seen, all, "the reader saw every change, once, in order");
}

crate::both_stores!(
    a_thousand_changes_page_through_a_restart_with_no_gap_or_repeat,
    changes_filter_by_container_and_refuse_bad_arguments,
    retention_purges_changes_and_positions_go_on,
    a_store_made_before_the_change_log_is_backfilled_from_edge_history,
    a_follower_too_far_behind_is_told_where_to_resume,
    a_reader_following_concurrent_writers_misses_nothing,
);
