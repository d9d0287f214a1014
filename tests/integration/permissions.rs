//! Who may see and change what (contract "Identity and permissions", seed 000 "Permissions"),
//! through GraphQL and the REST endpoints, allowed and denied.

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;
use crate::openlineage::run_event;

both_stores!(
    tokens_are_required_and_revocable,
    roles_gate_catalog_and_team_management,
    edges_need_editor_on_every_affected_datastore,
    evidence_details_need_viewer_on_every_endpoint,
    metadata_assertions_need_reporter,
    openlineage_events_need_editor_and_deny_alone,
    restricted_admin_follows_its_team,
    new_tags_through_openlineage_need_admin,
    openlineage_applies_to_the_writable_matches_of_a_dataset,
    ingest_routes_authenticate_before_reading_the_body,
);

fn code(v: &Value) -> &str {
    v["errors"][0]["extensions"]["code"].as_str().unwrap_or("")
}

/// Two datastores with one container each, namespaces for OpenLineage.
async fn two_datastores(app: &TestApp) -> (i64, i64, i64, i64) {
    let mut out = Vec::new();
    for (ds, table) in [("one", "a"), ("two", "b")] {
        let d = app
            .ok(
                "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                json!({"i": {"name": ds, "type": "postgresql", "namespaces": [format!("postgres://{ds}:5432")]}}),
            )
            .await["upsertDatastore"]["id"]
            .as_i64()
            .unwrap();
        let c = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                json!({"i": {"datastoreId": d, "database": "db", "schema": "public", "name": table, "fields": [{"name": "x"}]}}),
            )
            .await["upsertContainer"]["id"]
            .as_i64()
            .unwrap();
        out.push(d);
        out.push(c);
    }
    (out[0], out[1], out[2], out[3])
}

async fn team(app: &TestApp, name: &str, members: &[&str], perms: &[(i64, &str)]) {
    let permissions: Vec<Value> = perms.iter().map(|(d, p)| json!({"datastoreId": d, "permission": p})).collect();
    app.ok(
        "mutation($i: TeamInput!) { upsertTeam(input: $i) { name } }",
        json!({"i": {"name": name, "members": members, "permissions": permissions}}),
    )
    .await;
}

async fn tokens_are_required_and_revocable(app: TestApp) {
    let q = "{ datastores { id } }";
    let none = app.gql_as(None, q, json!({})).await;
    assert_eq!(code(&none), "UNAUTHENTICATED", "{none}");
    assert_eq!(none["data"], json!(null));
    let bad = app.gql_as(Some("trb_not_a_real_token"), q, json!({})).await;
    assert_eq!(code(&bad), "UNAUTHENTICATED");
    let (status, body) = app.post_as(None, "/api/v1/lineage", &json!({})).await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = app.post_as(None, "/api/v1/openlineage/lineage", &json!({})).await;
    assert_eq!(status, 401);
    let token = app.token_for("reader", "MEMBER", None).await;
    let ok = app.gql_as(Some(&token), "{ datastores { id } me { user role unrestrictedAdmin } }", json!({})).await;
    assert!(ok.get("errors").is_none(), "{ok}");
    assert_eq!(ok["data"]["me"], json!({"user": "reader", "role": "MEMBER", "unrestrictedAdmin": false}));
    // `Token <t>` works like `Bearer <t>` (post_as sends the Token form).
    let (status, _) = app.post_as(Some(&token), "/api/v1/lineage", &json!([])).await;
    assert_eq!(status, 201);
    tributary::auth::Auth::new(app.store.clone(), true).revoke("reader").await.unwrap();
    let revoked = app.gql_as(Some(&token), q, json!({})).await;
    assert_eq!(code(&revoked), "UNAUTHENTICATED", "a revoked token stops at once");
}

async fn roles_gate_catalog_and_team_management(app: TestApp) {
    let (ds1, _, _, _) = two_datastores(&app).await;
    let member = app.token_for("m", "MEMBER", None).await;
    let upsert_ds = "mutation { upsertDatastore(input: {name: \"x\", type: \"snowflake\"}) { id } }";
    assert_eq!(code(&app.gql_as(Some(&member), upsert_ds, json!({})).await), "FORBIDDEN");
    let upsert_c = "mutation($d: Int!) { upsertContainer(input: {datastoreId: $d, name: \"new\"}) { id } }";
    assert_eq!(code(&app.gql_as(Some(&member), upsert_c, json!({"d": ds1})).await), "FORBIDDEN");
    let team_q = "mutation { upsertTeam(input: {name: \"t\", members: [\"m\"]}) { name } }";
    assert_eq!(code(&app.gql_as(Some(&member), team_q, json!({})).await), "FORBIDDEN");
    team(&app, "editors", &["m"], &[(ds1, "EDITOR")]).await;
    let v = app.gql_as(Some(&member), upsert_c, json!({"d": ds1})).await;
    assert!(v.get("errors").is_none(), "EDITOR may upsert containers: {v}");
    let me = app
        .gql_as(Some(&member), "{ me { permissions { datastoreId permission } } teams { name members } }", json!({}))
        .await;
    assert_eq!(me["data"]["me"]["permissions"], json!([{"datastoreId": ds1, "permission": "EDITOR"}]));
    assert_eq!(me["data"]["teams"], json!([{"name": "editors", "members": ["m"]}]));
    let queried = app.gql_as(Some(&member), "{ containers { total } }", json!({})).await;
    assert_eq!(queried["data"]["containers"]["total"], 3, "any valid token may query");
}

async fn edges_need_editor_on_every_affected_datastore(app: TestApp) {
    let (ds1, a, ds2, b) = two_datastores(&app).await;
    let (_, fa) = app.container(ds1, "a2", &["y"]).await;
    let a2 = app.ok("{ containers(name: \"a2\") { items { id } } }", json!({})).await["containers"]["items"][0]["id"]
        .as_i64()
        .unwrap();
    let user = app.token_for("e", "MANAGER", None).await;
    team(&app, "t", &["e"], &[(ds1, "EDITOR"), (ds2, "VIEWER")]).await;
    let create =
        "mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t}) { id } }";
    let cross = app.gql_as(Some(&user), create, json!({"s": a, "t": b})).await;
    assert_eq!(code(&cross), "FORBIDDEN", "both sides of a cross-datastore edge: {cross}");
    assert!(cross["errors"][0]["message"].as_str().unwrap().contains(&ds2.to_string()));
    let inside = app.gql_as(Some(&user), create, json!({"s": a, "t": a2})).await;
    assert!(inside.get("errors").is_none(), "{inside}");
    let _ = fa;
    let admin_edge = app.edge(b, a).await;
    let upd = "mutation($id: Int!) { updateEdge(id: $id, input: {description: \"x\"}) { id } }";
    assert_eq!(code(&app.gql_as(Some(&user), upd, json!({"id": admin_edge})).await), "FORBIDDEN");
    let del = "mutation($id: Int!) { deleteEdge(id: $id) }";
    assert_eq!(code(&app.gql_as(Some(&user), del, json!({"id": admin_edge})).await), "FORBIDDEN");
    assert_eq!(app.ok("{ edges { total } }", json!({})).await["edges"]["total"], 2, "denied calls changed nothing");
    team(&app, "t", &["e"], &[(ds1, "EDITOR"), (ds2, "EDITOR")]).await;
    let v = app.gql_as(Some(&user), del, json!({"id": admin_edge})).await;
    assert_eq!(v["data"]["deleteEdge"], true, "{v}");
}

async fn evidence_details_need_viewer_on_every_endpoint(app: TestApp) {
    let (ds1, _, ds2, _) = two_datastores(&app).await;
    let ev = run_event(
        "COMPLETE",
        "r1",
        "job",
        vec![json!({"namespace": "postgres://one:5432", "name": "db.public.a"})],
        vec![json!({"namespace": "postgres://two:5432", "name": "db.public.b"})],
    );
    let (s, b) = app.post("/api/v1/lineage", &ev).await;
    assert_eq!(s, 201, "{b}");
    let q = "{ edges { items { evidence { provider sourceRelation details } } } }";
    let admin = app.ok(q, json!({})).await;
    assert!(admin["edges"]["items"][0]["evidence"][0]["details"].is_object(), "unrestricted admins always see details");
    let viewer = app.token_for("v", "MEMBER", None).await;
    team(&app, "half", &["v"], &[(ds1, "VIEWER")]).await;
    let half = app.gql_as(Some(&viewer), q, json!({})).await;
    let e = &half["data"]["edges"]["items"][0]["evidence"][0];
    assert_eq!(e["details"], json!(null), "{half}");
    assert_eq!(e["sourceRelation"], "");
    assert!(e["provider"].is_string(), "the rest of the evidence stays visible");
    team(&app, "half", &["v"], &[(ds1, "VIEWER"), (ds2, "REPORTER")]).await;
    let still = app.gql_as(Some(&viewer), q, json!({})).await;
    assert_eq!(still["data"]["edges"]["items"][0]["evidence"][0]["details"], json!(null), "REPORTER is not VIEWER");
    team(&app, "half", &["v"], &[(ds1, "VIEWER"), (ds2, "EDITOR")]).await;
    let full = app.gql_as(Some(&viewer), q, json!({})).await;
    let e = &full["data"]["edges"]["items"][0]["evidence"][0];
    assert!(e["details"].is_object(), "{full}");
    assert_eq!(e["sourceRelation"], json!(["nightly", "job"]).to_string());
}

async fn metadata_assertions_need_reporter(app: TestApp) {
    let (ds1, a, _, _) = two_datastores(&app).await;
    let q = "query($c: Int!) { metadataAssertions(containerId: $c) { attribute } }";
    let user = app.token_for("r", "MEMBER", None).await;
    assert_eq!(code(&app.gql_as(Some(&user), q, json!({"c": a})).await), "FORBIDDEN");
    team(&app, "reporters", &["r"], &[(ds1, "REPORTER")]).await;
    let v = app.gql_as(Some(&user), q, json!({"c": a})).await;
    assert!(v.get("errors").is_none(), "{v}");
}

async fn openlineage_events_need_editor_and_deny_alone(app: TestApp) {
    let (ds1, _, _, _) = two_datastores(&app).await;
    let user = app.token_for("producer", "MEMBER", None).await;
    team(&app, "etl", &["producer"], &[(ds1, "EDITOR")]).await;
    let one = |name: &str| json!({"namespace": "postgres://one:5432", "name": format!("db.public.{name}")});
    let cross = run_event(
        "COMPLETE",
        "x1",
        "cross",
        vec![one("a")],
        vec![json!({"namespace": "postgres://two:5432", "name": "db.public.b"})],
    );
    let (status, body) = app.post_as(Some(&user), "/api/v1/lineage", &cross).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["detail"]["events"][0]["status"], "rejected");
    assert_eq!(
        app.ok("{ edges(includeRetired: true) { total } }", json!({})).await["edges"]["total"],
        0,
        "a denied event applies nothing"
    );
    // In a list, the denied event gets its own status while the rest go on.
    let allowed = run_event(
        "COMPLETE",
        "x2",
        "inside",
        vec![one("a")],
        vec![json!({"namespace": "s3://landing", "name": "out"})],
    );
    let (status, body) = app.post_as(Some(&user), "/api/v1/lineage", &json!([allowed, cross])).await;
    assert_eq!(status, 201);
    let statuses: Vec<&str> =
        body["events"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, vec!["applied", "rejected"], "{body}");
    assert_eq!(app.ok("{ edges { total } }", json!({})).await["edges"]["total"], 1);
    // An unknown dataset may stay an external end without any permission on it.
    let (status, body) = app.post_as(Some(&user), "/api/v1/openlineage/lineage", &cross).await;
    assert_eq!(status, 400, "seed 002's endpoint reports the denied event as a failure: {body}");
}

async fn restricted_admin_follows_its_team(app: TestApp) {
    let (ds1, a, ds2, b) = two_datastores(&app).await;
    team(&app, "ops", &[], &[(ds1, "EDITOR")]).await;
    let admin = app.token_for("ops-admin", "ADMIN", Some("ops")).await;
    let me = app.gql_as(Some(&admin), "{ me { role unrestrictedAdmin permissions { datastoreId } } }", json!({})).await;
    assert_eq!(me["data"]["me"]["unrestrictedAdmin"], false);
    assert_eq!(me["data"]["me"]["permissions"], json!([{"datastoreId": ds1}]));
    let create =
        "mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t}) { id } }";
    assert_eq!(code(&app.gql_as(Some(&admin), create, json!({"s": a, "t": b})).await), "FORBIDDEN");
    let ds = "mutation { upsertDatastore(input: {name: \"z\", type: \"x\"}) { id } }";
    assert_eq!(code(&app.gql_as(Some(&admin), ds, json!({})).await), "FORBIDDEN");
    // ...but manages teams, granting no more than it holds.
    let grant = "mutation($d: Int!) { upsertTeam(input: {name: \"ops\", members: [\"x\"], permissions: [{datastoreId: $d, permission: EDITOR}]}) { name } }";
    let t = app.gql_as(Some(&admin), grant, json!({"d": ds1})).await;
    assert!(t.get("errors").is_none(), "{t}");
    let escalate = app.gql_as(Some(&admin), grant, json!({"d": ds2})).await;
    assert_eq!(code(&escalate), "FORBIDDEN", "{escalate}");
    let (_, fb) = (ds2, b);
    let _ = fb;
}

async fn new_tags_through_openlineage_need_admin(app: TestApp) {
    let (ds1, a, _, _) = two_datastores(&app).await;
    let user = app.token_for("tagger", "MEMBER", None).await;
    team(&app, "etl", &["tagger"], &[(ds1, "EDITOR")]).await;
    let tagged = |run: &str, value: &str| {
        let mut out = json!({"namespace": "postgres://one:5432", "name": "db.public.a"});
        out["facets"] = json!({"tags": {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json",
                                        "tags": [{"key": "tier", "value": value, "source": "USER"}]}});
        run_event("COMPLETE", run, "tagging", vec![], vec![out])
    };
    let (status, body) = app.post_as(Some(&user), "/api/v1/lineage", &tagged("t1", "gold")).await;
    assert_eq!(status, 403, "a new tag needs ADMIN: {body}");
    let q = "query($c: Int!) { metadataAssertions(containerId: $c) { attribute } }";
    assert_eq!(app.ok(q, json!({"c": a})).await["metadataAssertions"], json!([]), "the refused event changed nothing");
    // An admin creates it; then an editor may use it, while another new tag is still refused.
    let (status, _) = app.post("/api/v1/lineage", &tagged("t2", "gold")).await;
    assert_eq!(status, 201);
    let (status, body) =
        app.post_as(Some(&user), "/api/v1/lineage", &json!([tagged("t3", "gold"), tagged("t4", "platinum")])).await;
    assert_eq!(status, 201);
    let statuses: Vec<&str> =
        body["events"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, vec!["applied", "rejected"], "only the event with the new tag is refused: {body}");
}

/// A source datastore and two datastores ("east", "west") that list one shared namespace and
/// both hold `db.public.orders`: (source, east, west datastores; raw, east orders, west orders).
async fn shared_namespace(app: &TestApp) -> ([i64; 3], [i64; 3]) {
    let mut ds = [0; 3];
    let mut cs = [0; 3];
    for (i, (name, ns, table)) in [
        ("src", "postgres://src:5432", "raw"),
        ("east", "postgres://shared:5432", "orders"),
        ("west", "postgres://shared:5432", "orders"),
    ]
    .into_iter()
    .enumerate()
    {
        ds[i] = app
            .ok(
                "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                json!({"i": {"name": name, "type": "postgresql", "namespaces": [ns]}}),
            )
            .await["upsertDatastore"]["id"]
            .as_i64()
            .unwrap();
        cs[i] = app
            .ok(
                "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                json!({"i": {"datastoreId": ds[i], "database": "db", "schema": "public", "name": table, "fields": [{"name": "id"}]}}),
            )
            .await["upsertContainer"]["id"]
            .as_i64()
            .unwrap();
    }
    (ds, cs)
}

/// The live OpenLineage edges as sorted (source container, target container) pairs.
async fn container_pairs(app: &TestApp) -> Vec<(i64, i64)> {
    let v = app.ok("{ edges(size: 1000) { items { sourceContainerId targetContainerId } } }", json!({})).await;
    let mut out: Vec<(i64, i64)> = v["edges"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["sourceContainerId"].as_i64()?, e["targetContainerId"].as_i64()?)))
        .collect();
    out.sort();
    out
}

async fn openlineage_applies_to_the_writable_matches_of_a_dataset(app: TestApp) {
    let ([src, east, west], [raw, east_orders, west_orders]) = shared_namespace(&app).await;
    let input = json!({"namespace": "postgres://src:5432", "name": "db.public.raw"});
    let orders = json!({"namespace": "postgres://shared:5432", "name": "db.public.orders"});
    let load = |run: &str, job: &str| run_event("COMPLETE", run, job, vec![input.clone()], vec![orders.clone()]);
    let ingest = "mutation($e: [JSON!]!) { ingestOpenLineage(events: $e) { applied rejected events { status errors { message } } } }";

    // East's editor: the dataset matches both datastores; only the east container gets the edge.
    let east_editor = app.token_for("east-etl", "MEMBER", None).await;
    team(&app, "east-team", &["east-etl"], &[(src, "EDITOR"), (east, "EDITOR"), (west, "VIEWER")]).await;
    let v = app.gql_as(Some(&east_editor), ingest, json!({"e": [load("g1", "graphql-east")]})).await;
    assert_eq!(v["data"]["ingestOpenLineage"]["applied"], 1, "{v}");
    assert_eq!(container_pairs(&app).await, vec![(raw, east_orders)], "only the writable match");

    // West's editor through seed 000's REST endpoint: its own match, the east edge untouched.
    let west_editor = app.token_for("west-etl", "MEMBER", None).await;
    team(&app, "west-team", &["west-etl"], &[(src, "EDITOR"), (west, "EDITOR")]).await;
    let (status, body) = app.post_as(Some(&west_editor), "/api/v1/lineage", &load("r1", "rest-west")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(container_pairs(&app).await, vec![(raw, east_orders), (raw, west_orders)]);

    // An editor of both, through seed 002's endpoint: one event, a connection per writable match.
    let both = app.token_for("both-etl", "MEMBER", None).await;
    team(&app, "both-team", &["both-etl"], &[(src, "EDITOR"), (east, "EDITOR"), (west, "EDITOR")]).await;
    let (status, body) = app.post_as(Some(&both), "/api/v1/openlineage/lineage", &load("c1", "collate-both")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["lineageEdgesCreated"], 2, "{body}");
    let evidence = app
        .ok(
            "query($c: Int!) { edges(containerId: $c) { items { targetContainerId evidence { sourceRelation } } } }",
            json!({"c": west_orders}),
        )
        .await;
    let relations: Vec<&str> = evidence["edges"]["items"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sourceRelation"].as_str().unwrap())
        .collect();
    assert!(relations.iter().any(|r| r.contains("collate-both")), "{evidence}");

    // No writable match: denied on every transport, and nothing changes.
    let before = container_pairs(&app).await;
    let reader = app.token_for("src-only", "MEMBER", None).await;
    team(&app, "src-team", &["src-only"], &[(src, "EDITOR"), (east, "VIEWER"), (west, "VIEWER")]).await;
    let v = app.gql_as(Some(&reader), ingest, json!({"e": [load("g2", "graphql-denied")]})).await;
    let r = &v["data"]["ingestOpenLineage"];
    assert_eq!((r["applied"].as_i64(), r["rejected"].as_i64()), (Some(0), Some(1)), "{v}");
    let message = r["events"][0]["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("db.public.orders") && message.contains("EDITOR"), "names the dataset: {message}");
    let (status, body) = app.post_as(Some(&reader), "/api/v1/lineage", &load("r2", "rest-denied")).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = app.post_as(Some(&reader), "/api/v1/openlineage/lineage", &load("c2", "collate-denied")).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["status"], "failure");
    // A table of that namespace not catalogued yet is a known dataset too.
    let new_table = json!({"namespace": "postgres://shared:5432", "name": "db.public.not_yet"});
    let uncatalogued = run_event("COMPLETE", "r3", "rest-new", vec![input.clone()], vec![new_table]);
    let (status, body) = app.post_as(Some(&reader), "/api/v1/lineage", &uncatalogued).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(container_pairs(&app).await, before, "denied events changed nothing");
    // An unknown dataset stays an external endpoint, needing no permission on it.
    let unknown = json!({"namespace": "postgres://elsewhere:5432", "name": "db.public.orders"});
    let outside = run_event("COMPLETE", "r4", "rest-outside", vec![input.clone()], vec![unknown]);
    let (status, body) = app.post_as(Some(&reader), "/api/v1/lineage", &outside).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["events"][0]["status"], "applied", "{body}");
}

/// An ingest request without a valid token is answered 401 from its headers alone: the server
/// does not wait for (or inflate) a body announced at 50 MiB, of which only a few bytes are sent.
async fn ingest_routes_authenticate_before_reading_the_body(app: TestApp) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.url.trim_start_matches("http://").to_string();
    let routes = [
        "/api/v1/lineage",
        "/api/lineage/openlineage",
        "/api/v1/openlineage/lineage",
        "/api/v1/openlineage/lineage/batch",
        "/v1/api/lineage",
    ];
    for path in routes {
        for auth in ["", "Authorization: Bearer trb_not_a_real_token\r\n"] {
            let mut conn = tokio::net::TcpStream::connect(&addr).await.expect("connect");
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n{auth}Content-Length: {}\r\n\r\n",
                50 * 1024 * 1024 - 1
            );
            conn.write_all(head.as_bytes()).await.expect("send headers");
            conn.write_all(b"\x1f\x8b").await.expect("send the first body bytes");
            // The rest of the body never comes: only an answer from the headers ends this read.
            let mut answer = vec![0u8; 512];
            let n = tokio::time::timeout(std::time::Duration::from_secs(60), conn.read(&mut answer))
                .await
                .unwrap_or_else(|_| panic!("{path} waited for the body of an unauthenticated request"))
                .expect("read the answer");
            let text = String::from_utf8_lossy(&answer[..n]);
            assert!(text.starts_with("HTTP/1.1 401"), "{path} {auth:?}: {text}");
        }
    }
    let events = app.ok("{ openLineageEvents { total } }", json!({})).await;
    assert_eq!(events["openLineageEvents"]["total"], 0, "nothing was stored");
}
