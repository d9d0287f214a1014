//! Jobs and runs (issue #29): what OpenLineage events record about the jobs and runs that make
//! the lineage, a run's datasets united across its events (Spark's DataSourceV2 shape), what a
//! failed run leaves stale and how that clears, incidents, permissions, bad input, and the real
//! producers' sequences of the shared corpus.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    a_run_unites_its_inputs_and_outputs_across_events,
    a_failed_run_leaves_its_downstream_stale_until_it_succeeds,
    jobs_and_runs_refuse_bad_input,
    malformed_run_facets_are_reported_and_ignored,
    restricted_jobs_are_placeholders,
    a_run_lists_its_child_runs_as_the_caller_may_see_them,
    real_sequences_give_their_jobs_and_runs,
    graphs_carry_the_jobs_between_their_tables,
    a_short_name_resolves_to_the_full_one_first_seen_in_the_same_event,
    sql_names_its_job_when_asked,
    query_log_rows_with_a_user_are_runs_of_their_job,
    one_request_records_what_one_event_per_request_does,
    one_request_logs_the_changes_one_event_per_request_does,
    one_request_leaves_the_metadata_one_event_per_request_does,
    one_request_sees_what_its_earlier_events_did_to_other_jobs,
);

pub(crate) const NS: &str = "postgres://wh:5432";
pub(crate) const PRODUCER: &str = "https://github.com/OpenLineage/OpenLineage/tree/1.19.0/integration/spark";

pub(crate) fn ds(name: &str) -> Value {
    json!({"namespace": NS, "name": format!("db.public.{name}")})
}

/// An instant `secs` seconds after a fixed base an hour before the tests started (events must
/// not be in the future); the base is read once, so offsets are exact within a test.
pub(crate) fn at(secs: i64) -> String {
    static BASE: std::sync::OnceLock<chrono::DateTime<chrono::Utc>> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| {
        let now = chrono::Utc::now() - chrono::Duration::hours(1);
        now - chrono::Duration::nanoseconds(now.timestamp_subsec_nanos().into())
    });
    (base + chrono::Duration::seconds(secs)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub(crate) fn event(state: &str, t: &str, run: &str, job: &str, inputs: Vec<Value>, outputs: Vec<Value>) -> Value {
    json!({
        "eventType": state,
        "eventTime": t,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "etl", "name": job},
        "inputs": inputs,
        "outputs": outputs,
    })
}

pub(crate) fn uuid(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

impl TestApp {
    /// Datastore `wh` for `NS` with tables db.public.<name> (one field each); their ids.
    pub(crate) async fn tables(&self, store: &str, ns: &str, names: &[&str]) -> Vec<i64> {
        let d = self
            .ok(
                "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                json!({"i": {"name": store, "type": "postgresql", "namespaces": [ns]}}),
            )
            .await["upsertDatastore"]["id"]
            .as_i64()
            .unwrap();
        let mut out = Vec::new();
        for n in names {
            let c = self
                .ok(
                    "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
                    json!({"i": {"datastoreId": d, "database": "db", "schema": "public", "name": n, "fields": [{"name": "id"}]}}),
                )
                .await["upsertContainer"]["id"]
                .as_i64()
                .unwrap();
            out.push(c);
        }
        out
    }

    pub(crate) async fn ingest(&self, events: Value) -> Value {
        let (status, body) = self.post("/api/v1/lineage", &events).await;
        assert_eq!(status, 201, "{body:#}");
        body
    }

    pub(crate) async fn health(&self, container: i64) -> (String, Vec<String>) {
        let h = self
            .ok("query($c: Int!) { container(id: $c) { health { state causes { runId } } } }", json!({"c": container}))
            .await;
        let h = &h["container"]["health"];
        let causes = h["causes"].as_array().unwrap().iter().map(|r| r["runId"].as_str().unwrap().to_string()).collect();
        (h["state"].as_str().unwrap().to_string(), causes)
    }
}

fn names(list: &Value) -> BTreeSet<String> {
    list.as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap().to_string()).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

const RUN: &str = "query($r: String!) { run(runId: $r) { runId state states { state at } startedAt endedAt durationMs
    errorMessage job { namespace name } inputs { kind name namespace container { id } } outputs { name }
    edges { sourceContainerId targetContainerId } events { id } } }";

async fn a_run_unites_its_inputs_and_outputs_across_events(app: TestApp) {
    let ids = app.tables("wh", NS, &["a", "b", "c"]).await;
    let (a, b) = (ids[0], ids[1]);
    let run = uuid(1);
    // Spark DataSourceV2: the inputs come on START, the outputs (and nothing else) on COMPLETE.
    app.ingest(event("START", &at(0), &run, "ctas", vec![ds("a")], vec![])).await;
    app.ingest(event("COMPLETE", &at(90), &run, "ctas", vec![], vec![ds("b")])).await;
    let g = app
        .ok("query($c: Int!) { lineageGraph(containerId: $c, depth: 1, side: DOWNSTREAM) { edges { sourceContainerId targetContainerId } } }", json!({"c": a}))
        .await;
    assert_eq!(g["lineageGraph"]["edges"], json!([{"sourceContainerId": a, "targetContainerId": b}]), "{g:#}");

    let r = app.ok(RUN, json!({"r": run})).await["run"].clone();
    assert_eq!(r["state"], "COMPLETE");
    assert_eq!(
        r["states"].as_array().unwrap().iter().map(|s| s["state"].clone()).collect::<Vec<_>>(),
        [json!("START"), json!("COMPLETE")]
    );
    assert_eq!(r["durationMs"], 90_000);
    assert_eq!(r["job"], json!({"namespace": "etl", "name": "ctas"}));
    assert_eq!(names(&r["inputs"]), set(&["db.public.a"]));
    assert_eq!(r["inputs"][0]["container"]["id"], a);
    assert_eq!(r["inputs"][0]["kind"], "CONTAINER");
    assert_eq!(names(&r["outputs"]), set(&["db.public.b"]));
    assert_eq!(r["edges"], json!([{"sourceContainerId": a, "targetContainerId": b}]));
    assert_eq!(r["events"].as_array().unwrap().len(), 2);

    // The same events in the other order give the same run.
    let other = uuid(2);
    app.ingest(event("COMPLETE", &at(190), &other, "ctas", vec![], vec![ds("c")])).await;
    app.ingest(event("START", &at(100), &other, "ctas", vec![ds("a")], vec![])).await;
    let r2 = app.ok(RUN, json!({"r": other})).await["run"].clone();
    assert_eq!((r2["state"].as_str(), r2["durationMs"].as_i64()), (Some("COMPLETE"), Some(90_000)), "{r2:#}");

    let j = app
        .ok(
            "{ job(namespace: \"etl\", name: \"ctas\") { id name latestRun { runId } inputs { name at } outputs { name }
               runs { total items { runId } } firstSeenAt lastSeenAt } }",
            json!({}),
        )
        .await["job"]
        .clone();
    assert_eq!(j["latestRun"]["runId"], json!(other), "the run that began last");
    assert_eq!(names(&j["outputs"]), set(&["db.public.b", "db.public.c"]));
    assert_eq!(j["runs"]["total"], 2);
    assert_eq!(j["runs"]["items"][0]["runId"], json!(other), "the latest first");
    let by_id = app.ok("query($i: Int) { job(id: $i) { name } }", json!({"i": j["id"]})).await;
    assert_eq!(by_id["job"]["name"], "ctas");

    let c = app
        .ok(
            "query($a: Int!, $b: Int!) { a: container(id: $a) { consumers { name } producers { name } }
               b: container(id: $b) { producers { name latestRun { state } } lastWrite { at run { runId } } } }",
            json!({"a": a, "b": b}),
        )
        .await;
    assert_eq!(c["a"]["consumers"], json!([{"name": "ctas"}]));
    assert_eq!(c["a"]["producers"], json!([]));
    assert_eq!(c["b"]["producers"], json!([{"name": "ctas", "latestRun": {"state": "COMPLETE"}}]));
    assert_eq!(c["b"]["lastWrite"]["run"]["runId"], json!(run));
    let listed = app.ok("{ jobs(name: \"CTA\") { total items { name } } }", json!({})).await;
    assert_eq!(listed["jobs"]["total"], 1, "a case-insensitive substring");
}

async fn a_failed_run_leaves_its_downstream_stale_until_it_succeeds(app: TestApp) {
    let ids = app.tables("wh", NS, &["a", "b", "c", "d"]).await;
    let (a, b, c, d) = (ids[0], ids[1], ids[2], ids[3]);
    // a -> load_b -> b -> load_c -> c -> load_d -> d, every run complete.
    for (i, (job, input, output)) in
        [("load_b", "a", "b"), ("load_c", "b", "c"), ("load_d", "c", "d")].iter().enumerate()
    {
        let t = i as i64 * 10;
        let run = uuid(10 + i as u32);
        app.ingest(json!([
            event("START", &at(t), &run, job, vec![ds(input)], vec![ds(output)]),
            event("COMPLETE", &at(t + 5), &run, job, vec![ds(input)], vec![ds(output)]),
        ]))
        .await;
    }
    assert_eq!(app.health(a).await.0, "UNKNOWN", "no job writes a");
    for x in [b, c, d] {
        assert_eq!(app.health(x).await, ("FRESH".to_string(), vec![]));
    }
    // load_c fails at 03:00.
    let failed = uuid(20);
    let mut fail = event("FAIL", &at(105), &failed, "load_c", vec![ds("b")], vec![ds("c")]);
    fail["run"]["facets"] = json!({"errorMessage": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/ErrorMessageRunFacet.json", "message": "relation b is locked", "programmingLanguage": "SQL"}});
    app.ingest(json!([event("START", &at(100), &failed, "load_c", vec![ds("b")], vec![ds("c")]), fail])).await;
    assert_eq!(app.health(b).await.0, "FRESH", "upstream of the failure");
    assert_eq!(app.health(c).await, ("FAILED".to_string(), vec![failed.clone()]));
    assert_eq!(app.health(d).await, ("STALE".to_string(), vec![failed.clone()]));

    let inc = app
        .ok("{ incidents { items { run { runId errorMessage } job { name } errorMessage failedCount staleCount } hasMore } }", json!({}))
        .await;
    assert_eq!(
        inc["incidents"]["items"],
        json!([{"run": {"runId": failed, "errorMessage": "relation b is locked"}, "job": {"name": "load_c"},
                "errorMessage": "relation b is locked", "failedCount": 1, "staleCount": 1}]),
        "{inc:#}"
    );
    let since_after =
        app.ok("query($s: DateTime) { incidents(since: $s) { items { errorMessage } } }", json!({"s": at(200)})).await;
    assert_eq!(since_after["incidents"]["items"], json!([]), "the window excludes it");

    let ri = app
        .ok(
            "query($r: String!) { runImpact(runId: $r) { isPartial containers { container { id } distance via { id } health { state } } } }",
            json!({"r": failed}),
        )
        .await;
    let items: Vec<(i64, i64, bool, String)> = ri["runImpact"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["container"]["id"].as_i64().unwrap(),
                x["distance"].as_i64().unwrap(),
                x["via"].is_null(),
                x["health"]["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(items, vec![(c, 0, true, "FAILED".into()), (d, 1, false, "STALE".into())]);

    let imp = app
        .ok(
            "query($c: Int!) { impact(containerId: $c) { containers { container { id } health { state } } } }",
            json!({"c": b}),
        )
        .await;
    let states: BTreeMap<i64, String> = imp["impact"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["container"]["id"].as_i64().unwrap(), x["health"]["state"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(states, BTreeMap::from([(c, "FAILED".to_string()), (d, "STALE".to_string())]));
    let failing = app.ok("{ jobs(lastRunState: FAIL) { items { name latestRun { runId state } } } }", json!({})).await;
    assert_eq!(failing["jobs"]["items"], json!([{"name": "load_c", "latestRun": {"runId": failed, "state": "FAIL"}}]));

    // load_c runs again and completes: everything is fresh, the incident is gone.
    let again = uuid(21);
    app.ingest(json!([
        event("START", &at(200), &again, "load_c", vec![ds("b")], vec![ds("c")]),
        event("COMPLETE", &at(210), &again, "load_c", vec![ds("b")], vec![ds("c")]),
    ]))
    .await;
    for x in [b, c, d] {
        assert_eq!(app.health(x).await, ("FRESH".to_string(), vec![]), "container {x}");
    }
    assert_eq!(app.ok("{ incidents { items { errorMessage } } }", json!({})).await["incidents"]["items"], json!([]));
    assert_eq!(app.ok("{ jobs(lastRunState: FAIL) { total } }", json!({})).await["jobs"]["total"], 0);
}

async fn jobs_and_runs_refuse_bad_input(app: TestApp) {
    let (code, msg) = app.err("{ run(runId: \"no-such-run\") { state } }", json!({})).await;
    assert_eq!(code, "NOT_FOUND");
    assert!(msg.contains("no-such-run"), "{msg}");
    let (code, _) = app.err("{ run(runId: \"\") { state } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let long = "x".repeat(300);
    let (code, msg) = app.err("query($r: String!) { run(runId: $r) { state } }", json!({"r": long})).await;
    assert_eq!(code, "BAD_USER_INPUT", "{msg}");
    let (code, msg) = app.err("{ job(id: 987654) { name } }", json!({})).await;
    assert_eq!((code.as_str(), msg.contains("987654")), ("NOT_FOUND", true), "{msg}");
    let (code, msg) = app.err("{ job(namespace: \"etl\", name: \"nope\") { name } }", json!({})).await;
    assert_eq!((code.as_str(), msg.contains("nope")), ("NOT_FOUND", true), "{msg}");
    let (code, _) = app.err("{ job(id: 1, namespace: \"etl\") { name } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let (code, _) = app.err("{ jobs(size: 0) { total } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let (code, _) = app.err("{ jobs(datastoreId: 424242) { total } }", json!({})).await;
    assert_eq!(code, "NOT_FOUND");
    let (code, _) = app.err("{ runImpact(runId: \"no-such-run\") { isPartial } }", json!({})).await;
    assert_eq!(code, "NOT_FOUND");
    let (code, _) = app.err("{ runImpact(runId: \"r\", depth: 0) { isPartial } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    let (code, msg) = app.err("{ incidents(after: \"garbage\") { hasMore } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT", "{msg}");
    let (code, _) = app.err("{ incidents(first: 0) { hasMore } }", json!({})).await;
    assert_eq!(code, "BAD_USER_INPUT");
    // Nothing was recorded by any of it.
    assert_eq!(app.ok("{ jobs { total } }", json!({})).await["jobs"]["total"], 0);
}

async fn malformed_run_facets_are_reported_and_ignored(app: TestApp) {
    app.tables("wh", NS, &["a", "b"]).await;
    let run = uuid(30);
    let mut e = event("FAIL", &at(0), &run, "broken", vec![ds("a")], vec![ds("b")]);
    e["run"]["facets"] = json!({"errorMessage": "it broke", "parent": {"job": {"namespace": "x", "name": "y"}}, "nominalTime": {"nominalStartTime": "soon"}});
    let mut start = event("START", &at(-5), &run, "broken", vec![ds("a")], vec![ds("b")]);
    start["job"]["facets"] = json!({"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}, "ownership": "me"});
    let report = app.ingest(json!([start, e])).await;
    let warnings: Vec<String> = report["events"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|ev| ev["summary"]["warnings"].as_array().cloned().unwrap_or_default())
        .map(|w| w["location"].as_str().unwrap_or_default().to_string())
        .collect();
    for pointer in
        ["/run/facets/errorMessage", "/run/facets/parent/run", "/run/facets/nominalTime", "/job/facets/ownership"]
    {
        assert!(warnings.iter().any(|w| w.starts_with(pointer)), "no warning at {pointer}: {warnings:?}");
    }
    let r = app
        .ok(
            "query($r: String!) { run(runId: $r) { state errorMessage nominalStartTime parent { runId } job { processingType integration jobType owners parent { name } } } }",
            json!({"r": run}),
        )
        .await;
    assert_eq!(
        r["run"],
        json!({"state": "FAIL", "errorMessage": null, "nominalStartTime": null, "parent": null,
               "job": {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB", "owners": [], "parent": null}})
    );
}

async fn restricted_jobs_are_placeholders(app: TestApp) {
    let visible = app.tables("wh", NS, &["a", "b"]).await;
    let hidden = app.tables("secret", "postgres://secret:5432", &["s"]).await;
    let secret = json!({"namespace": "postgres://secret:5432", "name": "db.public.s"});
    let open_run = uuid(40);
    let hidden_run = uuid(41);
    app.ingest(json!([
        event("COMPLETE", &at(0), &open_run, "open_job", vec![ds("a")], vec![ds("b")]),
        event("COMPLETE", &at(1), &hidden_run, "secret_job", vec![ds("a")], vec![secret]),
    ]))
    .await;
    let wh = app.ok("{ containers(name: \"a\") { items { datastoreId } } }", json!({})).await["containers"]["items"][0]
        ["datastoreId"]
        .clone();
    let ann = app.viewer_of("ann", wh).await;
    let ask = |q: &'static str, v: Value| {
        let (app, ann) = (&app, ann.clone());
        async move { app.gql_as(Some(&ann), q, v).await["data"].clone() }
    };
    let list =
        ask("{ jobs { total items { id restricted name namespace latestRun { runId } inputs { name } } } }", json!({}))
            .await;
    assert_eq!(list["jobs"]["total"], 2, "counted, not named: {list:#}");
    let items = list["jobs"]["items"].as_array().unwrap();
    let open = items.iter().find(|j| j["name"] == "open_job").expect("the job on a viewable datastore is named");
    assert_eq!(
        (open["restricted"].as_bool(), open["latestRun"]["runId"].as_str()),
        (Some(false), Some(open_run.as_str()))
    );
    let placeholder = items.iter().find(|j| j["restricted"] == true).expect("a placeholder");
    assert_eq!(
        (&placeholder["name"], &placeholder["namespace"], &placeholder["latestRun"], &placeholder["inputs"]),
        (&Value::Null, &Value::Null, &Value::Null, &json!([]))
    );
    let r = ask("query($r: String!) { run(runId: $r) { restricted runId state } }", json!({"r": hidden_run})).await;
    assert_eq!(r["run"], json!({"restricted": true, "runId": null, "state": null}), "{r:#}");
    let r = ask("query($r: String!) { run(runId: $r) { restricted runId state } }", json!({"r": open_run})).await;
    assert_eq!(r["run"], json!({"restricted": false, "runId": open_run, "state": "COMPLETE"}));
    let denied = app
        .gql_as(Some(&ann), "query($r: String!) { runImpact(runId: $r) { isPartial } }", json!({"r": hidden_run}))
        .await;
    assert_eq!(denied["errors"][0]["extensions"]["code"], "FORBIDDEN", "{denied:#}");
    let allowed =
        ask("query($r: String!) { runImpact(runId: $r) { containers { distance } } }", json!({"r": open_run})).await;
    assert_eq!(allowed["runImpact"]["containers"], json!([{"distance": 0}]), "{allowed:#}");
    // Evidence names its job and run only to those who may see its details.
    let ev = ask(
        "query($c: Int!) { edges(containerId: $c) { items { evidence { job { name } run { runId } } } } }",
        json!({"c": visible[1]}),
    )
    .await;
    assert_eq!(
        ev["edges"]["items"][0]["evidence"][0],
        json!({"job": {"name": "open_job"}, "run": {"runId": open_run}}),
        "{ev:#}"
    );
    let ev = ask(
        "query($c: Int!) { edges(containerId: $c) { items { evidence { job { name } run { runId } } } } }",
        json!({"c": hidden[0]}),
    )
    .await;
    assert_eq!(ev["edges"]["items"][0]["evidence"][0], json!({"job": null, "run": null}), "{ev:#}");
    // An unrestricted admin sees both.
    let all = app.ok("{ jobs { items { name restricted } } }", json!({})).await;
    assert_eq!(
        all["jobs"]["items"],
        json!([{"name": "open_job", "restricted": false}, {"name": "secret_job", "restricted": false}])
    );
}

/// `event` with a `parent` run facet naming `parent` of job `dag`.
fn child_event(t: &str, run: &str, parent: &str, job: &str, inputs: Vec<Value>, outputs: Vec<Value>) -> Value {
    let mut e = event("COMPLETE", t, run, job, inputs, outputs);
    e["run"]["facets"] = json!({"parent": {"run": {"runId": parent}, "job": {"namespace": "etl", "name": "dag"}}});
    e
}

/// `Run.children` lists every child run, each checked as its job is (one batch for all): a
/// caller without VIEWER on a child's datastore gets it as a placeholder, neither dropped nor
/// named; a restricted run shows no parent, children or events.
async fn a_run_lists_its_child_runs_as_the_caller_may_see_them(app: TestApp) {
    app.tables("wh", NS, &["a", "b", "c"]).await;
    app.tables("secret", "postgres://secret:5432", &["s"]).await;
    let secret = json!({"namespace": "postgres://secret:5432", "name": "db.public.s"});
    let (dag, one, two, hidden) = (uuid(50), uuid(51), uuid(52), uuid(53));
    app.ingest(json!([
        event("COMPLETE", &at(0), &dag, "dag", vec![ds("a")], vec![ds("b")]),
        child_event(&at(1), &one, &dag, "task_one", vec![ds("a")], vec![ds("b")]),
        child_event(&at(2), &two, &dag, "task_two", vec![ds("b")], vec![ds("c")]),
        child_event(&at(3), &hidden, &dag, "task_secret", vec![ds("b")], vec![secret]),
    ]))
    .await;
    const CHILDREN: &str = "query($r: String!) { run(runId: $r) { children { restricted runId parent { runId } } } }";
    let children = |v: &Value| -> BTreeSet<String> {
        v["run"]["children"].as_array().unwrap().iter().map(|c| c.to_string()).collect()
    };
    let child = |restricted: bool, run: Option<&str>| {
        json!({"restricted": restricted, "runId": run, "parent": run.map(|_| json!({"runId": dag}))}).to_string()
    };
    let all = app.ok(CHILDREN, json!({"r": dag})).await;
    assert_eq!(
        children(&all),
        BTreeSet::from([child(false, Some(&one)), child(false, Some(&two)), child(false, Some(&hidden))]),
        "{all:#}"
    );
    let wh = app.ok("{ containers(name: \"a\") { items { datastoreId } } }", json!({})).await["containers"]["items"][0]
        ["datastoreId"]
        .clone();
    let ann = app.viewer_of("ann", wh).await;
    let seen = app.gql_as(Some(&ann), CHILDREN, json!({"r": dag})).await;
    assert_eq!(
        children(&seen["data"]),
        BTreeSet::from([child(false, Some(&one)), child(false, Some(&two)), child(true, None)]),
        "{seen:#}"
    );
    let r = app
        .gql_as(
            Some(&ann),
            "query($r: String!) { run(runId: $r) { restricted parent { runId } children { runId } events { id } } }",
            json!({"r": hidden}),
        )
        .await;
    assert_eq!(r["data"]["run"], json!({"restricted": true, "parent": null, "children": [], "events": []}), "{r:#}");
}

// ---- the real producers' sequences ----

fn corpus(name: &str) -> PathBuf {
    let dir = std::env::var_os("TRIBUTARY_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/openlineage"));
    dir.join(name)
}

/// The events of a corpus folder, in the order of their numbers.
fn sequence(folder: &str) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    let number = |p: &PathBuf| -> u64 {
        p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(u64::MAX)
    };
    files.sort_by_key(|p| (number(p), p.clone()));
    files.iter().map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()).collect()
}

/// A run's job, states (type, time) and the datasets it read and wrote, as the raw JSON has them.
type RawRun = (String, Vec<(String, String)>, BTreeSet<String>, BTreeSet<String>);

/// What the events say of each run, read from the raw JSON: its job, its state (the latest
/// terminal one, else the latest) and the datasets it read and wrote.
fn expected_runs(events: &[Value]) -> BTreeMap<String, (String, String, BTreeSet<String>, BTreeSet<String>)> {
    let mut out: BTreeMap<String, RawRun> = BTreeMap::new();
    for e in events {
        let Some(run) = e["run"]["runId"].as_str() else { continue };
        let job = format!("{}/{}", e["job"]["namespace"].as_str().unwrap(), e["job"]["name"].as_str().unwrap());
        let entry = out.entry(run.to_string()).or_insert_with(|| (job, Vec::new(), BTreeSet::new(), BTreeSet::new()));
        let t = chrono::DateTime::parse_from_rfc3339(e["eventTime"].as_str().unwrap()).unwrap().to_utc().to_rfc3339();
        entry.1.push((e["eventType"].as_str().unwrap_or("OTHER").to_string(), t));
        let dataset = |d: &Value| format!("{}|{}", d["namespace"].as_str().unwrap(), d["name"].as_str().unwrap());
        entry.2.extend(e["inputs"].as_array().into_iter().flatten().map(dataset));
        entry.3.extend(e["outputs"].as_array().into_iter().flatten().map(dataset));
    }
    out.into_iter()
        .map(|(run, (job, states, ins, outs))| {
            let terminal = states
                .iter()
                .filter(|(s, _)| ["COMPLETE", "FAIL", "ABORT"].contains(&s.as_str()))
                .max_by_key(|(_, t)| t.clone());
            let state = terminal.or_else(|| states.iter().max_by_key(|(_, t)| t.clone())).unwrap().0.clone();
            (run, (job, state, ins, outs))
        })
        .collect()
}

async fn real_sequences_give_their_jobs_and_runs(app: TestApp) {
    let app = app.with_zero_setup().await;
    for folder in ["21_compat_spark_cll_sequence", "27_marquez_apples_graph"] {
        let events = sequence(folder);
        for e in &events {
            app.ingest(e.clone()).await;
        }
        for (run, (job, state, inputs, outputs)) in expected_runs(&events) {
            let r = app
                .ok(
                    "query($r: String!) { run(runId: $r) { state job { namespace name } inputs { namespace name } outputs { namespace name } } }",
                    json!({"r": run}),
                )
                .await["run"]
                .clone();
            let got = |list: &Value| -> BTreeSet<String> {
                list.as_array()
                    .unwrap()
                    .iter()
                    .map(|d| format!("{}|{}", d["namespace"].as_str().unwrap(), d["name"].as_str().unwrap()))
                    .collect()
            };
            assert_eq!(
                format!("{}/{}", r["job"]["namespace"].as_str().unwrap(), r["job"]["name"].as_str().unwrap()),
                job,
                "{folder} {run}"
            );
            assert_eq!(r["state"], json!(state), "{folder} {run}");
            assert_eq!(got(&r["inputs"]), inputs, "{folder} {run}");
            assert_eq!(got(&r["outputs"]), outputs, "{folder} {run}");
        }
    }
    // The Spark CTAS's job names its parent, the Spark application.
    let spark = sequence("21_compat_spark_cll_sequence");
    let child = spark.iter().find(|e| !e["run"]["facets"]["parent"].is_null()).expect("a child event");
    let parent = &child["run"]["facets"]["parent"]["job"];
    let j = app
        .ok(
            "query($n: String, $m: String) { job(namespace: $n, name: $m) { parent { namespace name children { name } } } }",
            json!({"n": child["job"]["namespace"], "m": child["job"]["name"]}),
        )
        .await;
    assert_eq!(j["job"]["parent"]["name"], parent["name"], "{j:#}");
    assert!(j["job"]["parent"]["children"].as_array().unwrap().iter().any(|c| c["name"] == child["job"]["name"]));
}

const GRAPH_JOBS: &str =
    "jobs { id name latestRun { state } } jobEdges { jobId kind containerId sourceNodeId targetNodeId }";

/// (job name, kind, container) of a graph's job edges, sorted.
fn job_edges(g: &Value) -> Vec<(String, String, i64)> {
    let names: BTreeMap<i64, String> = g["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["id"].as_i64().unwrap(), j["name"].as_str().unwrap().to_string()))
        .collect();
    let mut out: Vec<(String, String, i64)> = g["jobEdges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let c = e["containerId"].as_i64().unwrap();
            let job = format!("job:{}", e["jobId"]);
            let (s, t) = (e["sourceNodeId"].as_str().unwrap(), e["targetNodeId"].as_str().unwrap());
            match e["kind"].as_str().unwrap() {
                "INPUT" => assert_eq!((s, t), (c.to_string().as_str(), job.as_str())),
                _ => assert_eq!((s, t), (job.as_str(), c.to_string().as_str())),
            }
            (names[&e["jobId"].as_i64().unwrap()].clone(), e["kind"].as_str().unwrap().to_string(), c)
        })
        .collect();
    out.sort();
    out
}

async fn graphs_carry_the_jobs_between_their_tables(app: TestApp) {
    let ids = app.tables("wh", NS, &["a", "b", "c"]).await;
    let (a, b, c) = (ids[0], ids[1], ids[2]);
    for (i, (job, input, output)) in [("load_b", "a", "b"), ("load_c", "b", "c")].iter().enumerate() {
        let run = uuid(50 + i as u32);
        app.ingest(event("COMPLETE", &at(i as i64), &run, job, vec![ds(input)], vec![ds(output)])).await;
    }
    let q = format!("query($c: Int!, $j: Boolean) {{ lineageGraph(containerId: $c, depth: 1, includeJobs: $j) {{ nodes {{ id }} {GRAPH_JOBS} }} }}");
    let plain = app.ok(&q, json!({"c": b})).await;
    assert_eq!(
        (plain["lineageGraph"]["jobs"].clone(), plain["lineageGraph"]["jobEdges"].clone()),
        (json!([]), json!([])),
        "only when asked"
    );
    let g = app.ok(&q, json!({"c": b, "j": true})).await["lineageGraph"].clone();
    let around_b = job_edges(&g);
    let s = |x: &str| x.to_string();
    assert_eq!(
        job_edges(&g),
        vec![
            (s("load_b"), s("INPUT"), a),
            (s("load_b"), s("OUTPUT"), b),
            (s("load_c"), s("INPUT"), b),
            (s("load_c"), s("OUTPUT"), c)
        ]
    );
    assert!(g["jobs"].as_array().unwrap().iter().all(|j| j["latestRun"]["state"] == "COMPLETE"), "{g:#}");
    // Around load_c: its input b and output c, one level; load_b only writes into it, so it is not between.
    let job = app.ok("{ job(namespace: \"etl\", name: \"load_c\") { id } }", json!({})).await["job"]["id"].clone();
    let q = format!(
        "query($j: Int!, $d: Int) {{ jobLineageGraph(jobId: $j, depth: $d) {{ nodes {{ id }} {GRAPH_JOBS} }} }}"
    );
    let g = app.ok(&q, json!({"j": job, "d": 1})).await["jobLineageGraph"].clone();
    let mut nodes: Vec<i64> = g["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_i64().unwrap()).collect();
    nodes.sort();
    assert_eq!(nodes, vec![b, c]);
    assert_eq!(job_edges(&g), vec![(s("load_c"), s("INPUT"), b), (s("load_c"), s("OUTPUT"), c)]);
    // One level more reaches a upstream, and load_b is between a and b.
    let g = app.ok(&q, json!({"j": job, "d": 2})).await["jobLineageGraph"].clone();
    assert_eq!(g["nodes"].as_array().unwrap().len(), 3, "{g:#}");
    assert!(job_edges(&g).contains(&(s("load_b"), s("INPUT"), a)));
    // The same three tables reached from the job or from b: one walk, the same jobs between them.
    assert_eq!(job_edges(&g), around_b, "{g:#}");
    let (code, _) = app.err("{ jobLineageGraph(jobId: 424242) { nodes { id } } }", json!({})).await;
    assert_eq!(code, "NOT_FOUND");
}

/// A legacy Airflow Postgres event names its input `shop.public.orders` and its column lineage
/// names the same table `public.orders`: in the zero-setup mode that is one container, also when
/// both names first appear in this one event.
async fn a_short_name_resolves_to_the_full_one_first_seen_in_the_same_event(app: TestApp) {
    let app = app.with_zero_setup().await;
    let ns = "postgres://legacy-db:5432";
    let facet = json!({"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/ColumnLineageDatasetFacet.json",
        "fields": {"total": {"inputFields": [{"namespace": ns, "name": "public.orders", "field": "amount"}]}}});
    let e = json!({
        "eventType": "COMPLETE", "eventTime": at(0), "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": uuid(60)}, "job": {"namespace": "airflow", "name": "dag.task"},
        "inputs": [{"namespace": ns, "name": "shop.public.orders"}],
        "outputs": [{"namespace": ns, "name": "shop.public.order_totals", "facets": {"columnLineage": facet}}],
    });
    // An earlier task of the DAG made the namespace's datastore: the event's names are then read
    // ahead against it (and the column lineage's short name found nothing yet).
    app.ingest(json!({
        "eventType": "COMPLETE", "eventTime": at(-10), "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": uuid(61)}, "job": {"namespace": "airflow", "name": "dag.extract"},
        "inputs": [{"namespace": ns, "name": "shop.public.raw"}], "outputs": [{"namespace": ns, "name": "shop.public.staged"}],
    }))
    .await;
    app.ingest(e).await;
    let found = app
        .ok(
            "{ containers(name: \"orders\") { items { id name database schema fields { items { name } } } } }",
            json!({}),
        )
        .await;
    let items = found["containers"]["items"].as_array().unwrap();
    let orders: Vec<&Value> = items.iter().filter(|c| c["name"] == "orders").collect();
    assert_eq!(orders.len(), 1, "one container for one table: {found:#}");
    assert_eq!((orders[0]["database"].as_str(), orders[0]["schema"].as_str()), (Some("shop"), Some("public")));
    let amount = app
        .ok(
            "query($c: Int!) { containerFields(containerId: $c, name: \"amount\") { items { id } } }",
            json!({"c": orders[0]["id"]}),
        )
        .await["containerFields"]["items"][0]["id"]
        .clone();
    assert!(amount.is_i64(), "the column lineage's input field is on the one container");
    let edges = app.ok("query($f: Int) { edges(fieldId: $f) { total } }", json!({"f": amount})).await;
    assert_eq!(edges["edges"]["total"], 1, "the column lineage starts at it: {edges:#}");
}

/// `ingestSql(job:)` records the job and a COMPLETE run of it that read and wrote what the
/// statements did; without `job`, no job is invented.
async fn sql_names_its_job_when_asked(app: TestApp) {
    let ids = app.tables("wh", NS, &["a", "b"]).await;
    let ds = app.ok("{ containers(name: \"a\") { items { datastoreId } } }", json!({})).await["containers"]["items"][0]
        ["datastoreId"]
        .clone();
    let q = "mutation($s: [String!]!, $d: Int!, $j: SqlJobInput) { ingestSql(statements: $s, dialect: \"postgres\", datastoreId: $d, job: $j) { recorded runId } }";
    let plain = app.ok(q, json!({"s": ["INSERT INTO db.public.b SELECT * FROM db.public.a"], "d": ds})).await;
    assert_eq!(plain["ingestSql"], json!({"recorded": 1, "runId": null}));
    assert_eq!(app.ok("{ jobs { total } }", json!({})).await["jobs"]["total"], 0, "no job invented");
    let named = app
        .ok(q, json!({"s": ["INSERT INTO db.public.b SELECT * FROM db.public.a"], "d": ds, "j": {"namespace": "querylog", "name": "etl_user", "runId": "q-1234"}}))
        .await;
    assert_eq!(named["ingestSql"]["runId"], "q-1234");
    let r = app.ok(RUN, json!({"r": "q-1234"})).await["run"].clone();
    assert_eq!(
        (r["state"].as_str(), &r["job"]),
        (Some("COMPLETE"), &json!({"namespace": "querylog", "name": "etl_user"}))
    );
    assert_eq!(r["inputs"][0]["container"]["id"], ids[0]);
    assert_eq!(names(&r["outputs"]), set(&["db.public.b"]));
    let (code, _) = app.err(q, json!({"s": ["SELECT 1"], "d": ds, "j": {"namespace": "", "name": "x"}})).await;
    assert_eq!(code, "BAD_USER_INPUT");
}

/// Imports a query log through the library's reader and import loop, as `import-query-log`
/// does (tests/cli.rs drives the command itself): the rows of the datastore `wh`.
async fn import_log(app: &TestApp, csv: &str) -> tributary::service::sql::QueryLogImport {
    use tributary::ingest::sql::query_log::{read_query_log, LogKind};
    let ds = app.store.list_datastores().await.unwrap().into_iter().find(|d| d.name == "wh").unwrap();
    let log = read_query_log(csv.as_bytes(), LogKind::Queries).unwrap();
    let dialect = tributary::ingest::sql::Dialect::Postgres;
    tributary::service::Lineage::new(app.store.clone())
        .import_query_log(&tributary::service::Caller::system(), &ds, dialect, log, 2, |_| {})
        .await
        .unwrap_or_else(|e| panic!("{e:?}"))
}

/// A query log's rows with a user are runs of the user's job, one per query id, COMPLETE at
/// the row's end time, reading and writing the statement's tables; a row without a user, and a
/// log without a user column, record no job; importing the log again changes no run.
async fn query_log_rows_with_a_user_are_runs_of_their_job(app: TestApp) {
    let ids = app.tables("wh", NS, &["a", "b", "c"]).await;
    // Out of start order, in chunks of two: the CTAS applies first.
    let log = "QUERY_ID,QUERY_TEXT,DATABASE_NAME,SCHEMA_NAME,USER_NAME,START_TIME,END_TIME\n\
        q-2,\"INSERT INTO c SELECT id FROM b\",db,public,etl,2026-01-01 00:00:10.000,2026-01-01 00:00:12.500\n\
        q-1,\"CREATE TABLE b AS SELECT id FROM a\",db,public,etl,2026-01-01 00:00:01.000,2026-01-01 00:00:04.000\n\
        q-3,\"SELECT id FROM c\",db,public,ann@example.com,2026-01-01 00:00:20.000,2026-01-01 00:00:21.000\n\
        q-4,\"INSERT INTO c SELECT id FROM a\",db,public,,2026-01-01 00:00:30.000,2026-01-01 00:00:31.000\n";
    let r = import_log(&app, log).await;
    assert_eq!((r.rows, r.recorded, r.failed), (4, 3, 0), "{r:?}");
    assert_eq!((r.runs, r.jobs.len(), r.job_namespace.as_str()), (3, 2, NS));
    let jobs = "{ jobs { total items { namespace name runs { total items { runId state } } } } }";
    let listed = app.ok(jobs, json!({})).await;
    let mut found: Vec<(String, String, Vec<String>)> = listed["jobs"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let runs = j["runs"]["items"].as_array().unwrap();
            assert!(runs.iter().all(|r| r["state"] == "COMPLETE"), "{j}");
            let mut run_ids: Vec<String> = runs.iter().map(|r| r["runId"].as_str().unwrap().to_string()).collect();
            run_ids.sort();
            (j["namespace"].as_str().unwrap().to_string(), j["name"].as_str().unwrap().to_string(), run_ids)
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            (NS.to_string(), "ann@example.com".to_string(), vec!["wh:q-3".to_string()]),
            (NS.to_string(), "etl".to_string(), vec!["wh:q-1".to_string(), "wh:q-2".to_string()]),
        ],
        "a job per user, a run per query id, none for the row without a user"
    );
    let etl = app
        .ok(
            "query($n: String!, $ns: String!) { job(namespace: $ns, name: $n) { latestRun { runId } inputs { name } outputs { name } } }",
            json!({"ns": NS, "n": "etl"}),
        )
        .await;
    assert_eq!(etl["job"]["latestRun"]["runId"], "wh:q-2", "the latest run by start time");
    assert_eq!(names(&etl["job"]["inputs"]), set(&["db.public.a", "db.public.b"]));
    assert_eq!(names(&etl["job"]["outputs"]), set(&["db.public.b", "db.public.c"]));
    let ctas = app.ok(RUN, json!({"r": "wh:q-1"})).await["run"].clone();
    assert_eq!((ctas["state"].as_str(), &ctas["job"]), (Some("COMPLETE"), &json!({"namespace": NS, "name": "etl"})));
    let time = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap()).unwrap().to_utc().to_rfc3339();
    assert_eq!(time(&ctas["startedAt"]), "2026-01-01T00:00:01+00:00");
    assert_eq!(time(&ctas["endedAt"]), "2026-01-01T00:00:04+00:00");
    assert_eq!(ctas["durationMs"], 3000);
    let states: Vec<&str> = ctas["states"].as_array().unwrap().iter().map(|s| s["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["START", "COMPLETE"]);
    assert_eq!(ctas["inputs"].as_array().unwrap().len(), 1);
    assert_eq!(ctas["inputs"][0]["container"]["id"], ids[0]);
    assert_eq!(names(&ctas["outputs"]), set(&["db.public.b"]));
    let insert = app.ok(RUN, json!({"r": "wh:q-2"})).await["run"].clone();
    assert_eq!(insert["inputs"][0]["container"]["id"], ids[1]);
    assert_eq!(names(&insert["outputs"]), set(&["db.public.c"]));
    assert_eq!(insert["durationMs"], 2500);
    let select = app.ok(RUN, json!({"r": "wh:q-3"})).await["run"].clone();
    assert_eq!(select["inputs"][0]["container"]["id"], ids[2], "a SELECT's run read its table");
    assert_eq!(select["outputs"], json!([]));
    let (code, _) = app.err(RUN, json!({"r": "wh:q-4"})).await;
    assert_eq!(code, "NOT_FOUND", "the row without a user is no run");

    // Again: the same jobs, runs and states.
    let again = import_log(&app, log).await;
    assert_eq!(again.runs, 3);
    assert_eq!(app.ok(jobs, json!({})).await, listed, "a second import adds no job or run");
    assert_eq!(app.ok(RUN, json!({"r": "wh:q-1"})).await["run"], ctas, "nor any state");

    // A log without a user column records lineage and no job.
    let plain =
        import_log(&app, "query_id,query_text\nq-9,\"INSERT INTO db.public.a SELECT id FROM db.public.c\"\n").await;
    assert_eq!((plain.recorded, plain.runs), (1, 0));
    let edges = app
        .ok(
            "query($c: Int) { edges(containerId: $c) { items { sourceContainerId targetContainerId } } }",
            json!({"c": ids[0]}),
        )
        .await;
    let c_to_a = json!({"sourceContainerId": ids[2], "targetContainerId": ids[0]});
    assert!(edges["edges"]["items"].as_array().unwrap().contains(&c_to_a), "the statement was recorded: {edges}");
    assert_eq!(app.ok("{ jobs { total } }", json!({})).await["jobs"]["total"], 2, "no job invented");
    let (code, _) = app.err(RUN, json!({"r": "wh:q-9"})).await;
    assert_eq!(code, "NOT_FOUND");
}

/// The embedded store keeps a request's job and run updates until its commit (a run's START
/// and COMPLETE in one request write its rows once): the same events sent all in one request
/// and one per request give the same jobs, runs, datasets, times and last writes; and from 8
/// concurrent clients (grouped into one write by the service), the same jobs, runs, edges,
/// evidence, change log and health.
async fn one_request_records_what_one_event_per_request_does(app: TestApp) {
    let ids = app.tables("wh", NS, &["p1_a", "p1_b", "p1_c", "p2_a", "p2_b", "p2_c"]).await;
    let events = |p: &str, base: u32| -> Vec<Value> {
        let d = |n: &str| ds(&format!("{p}_{n}"));
        let (r1, r2, r3) = (uuid(base + 1), uuid(base + 2), uuid(base + 3));
        let job = format!("{p}_job");
        vec![
            // DataSourceV2: inputs on START, outputs on COMPLETE.
            event("START", &at(0), &r1, &job, vec![d("a")], vec![]),
            event("COMPLETE", &at(30), &r1, &job, vec![], vec![d("b")]),
            // Every event names its datasets; a RUNNING between; a late START after its COMPLETE.
            event("COMPLETE", &at(100), &r2, &job, vec![d("a")], vec![d("b"), d("c")]),
            event("START", &at(40), &r2, &job, vec![d("a")], vec![d("b")]),
            event("RUNNING", &at(70), &r2, &job, vec![d("a")], vec![d("b")]),
            // The latest run fails: b and c were last completely written by r2.
            event("START", &at(200), &r3, &job, vec![d("a")], vec![d("b")]),
            event("FAIL", &at(260), &r3, &job, vec![], vec![]),
        ]
    };
    for e in events("p1", 100) {
        app.ingest(e).await;
    }
    app.ingest(Value::Array(events("p2", 200))).await;

    const JOB: &str = "query($n: String!) { job(namespace: \"etl\", name: $n) {
        inputs { name at } outputs { name at } firstSeenAt lastSeenAt latestRun { runId state }
        runs { total items { runId state states { state at } startedAt endedAt durationMs
          inputs { name at } outputs { name at } } } } }";
    // The second producer's answer with its names and run ids made the first's.
    let answer = |p: &str| {
        let app = &app;
        let p = p.to_string();
        async move {
            let j = app.ok(JOB, json!({"n": format!("{p}_job")})).await;
            let text = j.to_string().replace(&format!("{p}_"), "P_");
            let text = if p == "p2" {
                text.replace("000000000201", "000000000101")
                    .replace("000000000202", "000000000102")
                    .replace("000000000203", "000000000103")
            } else {
                text
            };
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let (one_by_one, batched) = (answer("p1").await, answer("p2").await);
    assert_eq!(batched, one_by_one, "batched:\n{batched:#}\none by one:\n{one_by_one:#}");
    assert_eq!(one_by_one["job"]["runs"]["total"], 3);
    assert_eq!(one_by_one["job"]["latestRun"]["state"], "FAIL");
    let outs = &one_by_one["job"]["outputs"];
    assert_eq!(names(outs), set(&["db.public.P_b", "db.public.P_c"]));

    for (b, c, r2) in [(ids[1], ids[2], uuid(102)), (ids[4], ids[5], uuid(202))] {
        let w = app
            .ok(
                "query($b: Int!, $c: Int!) { b: container(id: $b) { lastWrite { at run { runId } } health { state } }
                   c: container(id: $c) { lastWrite { at run { runId } } } }",
                json!({"b": b, "c": c}),
            )
            .await;
        for x in ["b", "c"] {
            assert_eq!(w[x]["lastWrite"]["run"]["runId"], json!(r2), "{w:#}");
            assert_eq!(
                chrono::DateTime::parse_from_rfc3339(w[x]["lastWrite"]["at"].as_str().unwrap()).unwrap(),
                chrono::DateTime::parse_from_rfc3339(&at(100)).unwrap(),
                "{w:#}"
            );
        }
        assert_eq!(w["b"]["health"]["state"], "FAILED", "{w:#}");
    }

    // The same events of 8 jobs (one per producer process) sent three ways: one per request in
    // turn, all in one request, and from 8 concurrent clients (one job each, one event per
    // request, as openlineage-python sends them: the service groups concurrent requests into
    // one write, issue #44). Each job's runs, its tables' edges with their evidence, their
    // change logs and health come out identical.
    let mut tables = Vec::new();
    for (copy, base) in [("s1", 1_000), ("s2", 2_000), ("s3", 3_000)] {
        let names: Vec<String> = (0..8).flat_map(|k| ["a", "b", "c"].map(|t| format!("{copy}j{k}_{t}"))).collect();
        let ids = app.tables("wh", NS, &names.iter().map(String::as_str).collect::<Vec<_>>()).await;
        tables.push((copy, base, ids));
    }
    let copy_of = |copy: &str, base: u32| -> Vec<Vec<Value>> {
        (0..8u32).map(|k| events(&format!("{copy}j{k}"), base + 10 * k)).collect()
    };
    for e in copy_of("s1", 1_000).into_iter().flatten() {
        app.ingest(e).await;
    }
    app.ingest(Value::Array(copy_of("s2", 2_000).into_iter().flatten().collect())).await;
    let clients = copy_of("s3", 3_000).into_iter().map(|job| {
        let app = &app;
        async move {
            for e in job {
                app.ingest(e).await;
            }
        }
    });
    futures_util::future::join_all(clients).await;

    // Everything one copy's job k answers, with its names, run ids and table ids made neutral.
    let observed = |copy: &'static str, base: u32, ids: Vec<i64>, k: usize| {
        let app = &app;
        async move {
            let own = &ids[3 * k..3 * k + 3];
            let position = |c: &Value| own.iter().position(|t| Some(*t) == c.as_i64()).map_or(-1, |p| p as i64);
            let job = app.ok(JOB, json!({"n": format!("{copy}j{k}_job")})).await;
            let mut tables = Vec::new();
            for &c in own {
                let edges = app
                    .ok(
                        "query($c: Int!) { edges(containerId: $c, includeRetired: true, size: 200) { items {
                           sourceContainerId targetContainerId sourceType operation
                           retired: retiredAt intervals { from }
                           evidence { provider evidenceType authorship jobName runId retired: retiredAt } } } }",
                        json!({"c": c}),
                    )
                    .await;
                let mut edges: Vec<Value> = edges["edges"]["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| {
                        let mut evidence: Vec<Value> = e["evidence"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|v| {
                                let mut v = v.clone();
                                v["retired"] = json!(!v["retired"].is_null());
                                v
                            })
                            .collect();
                        evidence.sort_by_key(|v| v.to_string());
                        json!({
                            "source": position(&e["sourceContainerId"]),
                            "target": position(&e["targetContainerId"]),
                            "type": [&e["sourceType"], &e["operation"]],
                            "retired": !e["retired"].is_null(),
                            "intervals": e["intervals"].as_array().unwrap().len(),
                            "evidence": evidence,
                        })
                    })
                    .collect();
                edges.sort_by_key(|v| v.to_string());
                let changes = app
                    .ok(
                        "query($c: Int) { changes(first: 100, containerId: $c) { items { kind containerIds } } }",
                        json!({"c": c}),
                    )
                    .await;
                let changes: Vec<Value> = changes["changes"]["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| {
                        let ends: Vec<i64> = i["containerIds"].as_array().unwrap().iter().map(position).collect();
                        json!({"kind": i["kind"], "ends": ends})
                    })
                    .collect();
                let (state, causes) = app.health(c).await;
                tables.push(json!({"edges": edges, "changes": changes, "health": state, "causes": causes}));
            }
            let mut text = json!({"job": job, "tables": tables}).to_string().replace(&format!("{copy}j{k}_"), "P_");
            for r in 1..=3 {
                text = text.replace(&uuid(base + 10 * k as u32 + r), &format!("run-{r}"));
            }
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    for k in 0..8 {
        let mut answers = Vec::new();
        for (copy, base, ids) in &tables {
            answers.push((*copy, observed(copy, *base, ids.clone(), k).await));
        }
        let (one_by_one, rest) = answers.split_first().unwrap();
        assert_eq!(one_by_one.1["job"]["job"]["runs"]["total"], 3, "{:#}", one_by_one.1);
        assert!(
            one_by_one.1["tables"].as_array().unwrap().iter().any(|t| !t["edges"].as_array().unwrap().is_empty()),
            "the job's events left edges: {:#}",
            one_by_one.1
        );
        for (copy, answer) in rest {
            assert_eq!(
                answer, &one_by_one.1,
                "job {k}, {copy} against one event per request:\n{answer:#}\n{:#}",
                one_by_one.1
            );
        }
    }
}

/// A request's events are applied in one store session, whose change-log entries (Neo4j keeps
/// them for the session's end) must come out as the same events sent one per request log them:
/// the same kinds, on the same edges, in the same order.
async fn one_request_logs_the_changes_one_event_per_request_does(app: TestApp) {
    let ids = app.tables("wh", NS, &["q1_a", "q1_b", "q1_c", "q2_a", "q2_b", "q2_c"]).await;
    let events = |p: &str, base: u32| -> Vec<Value> {
        let d = |n: &str| ds(&format!("{p}_{n}"));
        let job = format!("{p}_job");
        vec![
            // a -> b asserted, then replaced by c -> b (a -> b retires), then a -> b again
            // (revived; c -> b retires), then both.
            event("COMPLETE", &at(10), &uuid(base + 1), &job, vec![d("a")], vec![d("b")]),
            event("COMPLETE", &at(20), &uuid(base + 2), &job, vec![d("c")], vec![d("b")]),
            event("COMPLETE", &at(30), &uuid(base + 3), &job, vec![d("a")], vec![d("b")]),
            event("COMPLETE", &at(40), &uuid(base + 4), &job, vec![d("a"), d("c")], vec![d("b")]),
        ]
    };
    for e in events("q1", 300) {
        app.ingest(e).await;
    }
    app.ingest(Value::Array(events("q2", 400))).await;

    // Each producer's log on its `b`, with its tables named by position (a, b, c).
    let log = |b: i64, tables: [i64; 3]| {
        let app = &app;
        async move {
            let page = app
                .ok(
                    "query($c: Int) { changes(first: 100, containerId: $c) { items { kind containerIds } } }",
                    json!({"c": b}),
                )
                .await;
            page["changes"]["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    let ends: Vec<usize> = i["containerIds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| tables.iter().position(|t| Some(*t) == c.as_i64()).expect("a table of this producer"))
                        .collect();
                    format!("{} {ends:?}", i["kind"].as_str().unwrap())
                })
                .collect::<Vec<_>>()
        }
    };
    let one_by_one = log(ids[1], [ids[0], ids[1], ids[2]]).await;
    let batched = log(ids[4], [ids[3], ids[4], ids[5]]).await;
    assert_eq!(batched, one_by_one);
    let kinds: Vec<&str> = one_by_one.iter().map(|k| k.split(' ').next().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "CONTAINER_CREATED",
            "FIELD_CREATED",
            "EDGE_ASSERTED",
            "EDGE_ASSERTED",
            "EDGE_RETIRED",
            "EDGE_REVIVED",
            "EDGE_RETIRED",
            "EDGE_REVIVED"
        ],
        "{one_by_one:?}"
    );
}

/// Neo4j keeps a session's metadata values for its end too: a request's descriptions of one
/// dataset, changed and repeated, must leave the value and the time it was first asserted that
/// the same events sent one per request leave.
async fn one_request_leaves_the_metadata_one_event_per_request_does(app: TestApp) {
    let ids = app.tables("wh", NS, &["m1_a", "m1_b", "m2_a", "m2_b"]).await;
    let events = |p: &str, base: u32| -> Vec<Value> {
        let job = format!("{p}_job");
        let described = |text: &str| {
            let mut b = ds(&format!("{p}_b"));
            b["facets"] = json!({"documentation": {"_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/DocumentationDatasetFacet.json",
                "description": text}});
            b
        };
        let a = ds(&format!("{p}_a"));
        vec![
            event("COMPLETE", &at(10), &uuid(base + 1), &job, vec![a.clone()], vec![described("first")]),
            event("COMPLETE", &at(20), &uuid(base + 2), &job, vec![a.clone()], vec![described("second")]),
            // The same value again: its assertion time stays the second event's.
            event("COMPLETE", &at(30), &uuid(base + 3), &job, vec![a], vec![described("second")]),
        ]
    };
    for e in events("m1", 500) {
        app.ingest(e).await;
    }
    app.ingest(Value::Array(events("m2", 600))).await;

    let read = |c: i64| {
        let app = &app;
        async move {
            let d = app
                .ok(
                    "query($c: Int!) { container(id: $c) { description }
                       metadataAssertions(containerId: $c) { attribute source value assertedAt } }",
                    json!({"c": c}),
                )
                .await;
            let asserted: Vec<(String, String, Value)> = d["metadataAssertions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["attribute"].as_str().unwrap().to_string(),
                        m["source"].as_str().unwrap().to_string(),
                        m["value"].clone(),
                    )
                })
                .collect();
            let times: Vec<String> =
                d["metadataAssertions"].as_array().unwrap().iter().map(|m| m["assertedAt"].to_string()).collect();
            (d["container"]["description"].clone(), asserted, times)
        }
    };
    let (one_by_one, batched) = (read(ids[1]).await, read(ids[3]).await);
    assert_eq!(one_by_one.0, json!("second"), "{one_by_one:?}");
    assert_eq!(batched.0, one_by_one.0);
    assert_eq!(batched.1, one_by_one.1, "the same values from the same sources");
    assert_eq!(one_by_one.2.len(), batched.2.len());
    // Each producer's value was asserted by its own second event: the times differ between the
    // producers by the same offset as everything else, so compare each with its own log.
    for (c, times) in [(ids[1], &one_by_one.2), (ids[3], &batched.2)] {
        let changed = app
            .ok(
                "query($c: Int!) { metadataAssertions(containerId: $c) { attribute assertedAt observedAt } }",
                json!({"c": c}),
            )
            .await;
        let rows = changed["metadataAssertions"].as_array().unwrap();
        let description = rows.iter().find(|m| m["attribute"] == "description").expect("a description");
        assert_ne!(
            description["assertedAt"], description["observedAt"],
            "the repeated value keeps the time it changed, not the last observation: {times:?}"
        );
    }
}

/// A request's events work from the prior state read once for the request (issue #44, item 1):
/// what an earlier event of the request did, to its own job's evidence or to another job's (a
/// DROP retires every job's evidence on the table, a RENAME moves it, a JobEvent replaces the
/// job's design-time lineage), is what a later event sees, as when each came in a request of its
/// own. The FAIL of a run retires only the evidence that run asserted first: after the DROP the
/// edge a -> b is asserted anew by r2, so r2's FAIL retires it.
async fn one_request_sees_what_its_earlier_events_did_to_other_jobs(app: TestApp) {
    let names: Vec<String> =
        ["w1", "w2"].iter().flat_map(|p| ["a", "b", "c", "d", "e"].map(|t| format!("{p}_{t}"))).collect();
    let ids = app.tables("wh", NS, &names.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let lifecycle = |mut d: Value, change: &str, previous: Option<Value>| {
        let mut facet = json!({"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/LifecycleStateChangeDatasetFacet.json", "lifecycleStateChange": change});
        if let Some(p) = previous {
            facet["previousIdentifier"] = p;
        }
        d["facets"] = json!({"lifecycleStateChange": facet});
        d
    };
    let events = |p: &str, base: u32| -> Vec<Value> {
        let d = |n: &str| ds(&format!("{p}_{n}"));
        let (job, other) = (format!("{p}_job"), format!("{p}_other"));
        let mut design = event("COMPLETE", &at(0), &uuid(base + 9), &job, vec![d("c")], vec![d("d")]);
        design.as_object_mut().unwrap().retain(|k, _| k != "run" && k != "eventType");
        design["schemaURL"] = json!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent");
        vec![
            event("START", &at(0), &uuid(base + 1), &job, vec![d("a")], vec![d("b")]),
            event("COMPLETE", &at(10), &uuid(base + 1), &job, vec![d("a")], vec![d("b"), d("c")]),
            // Another job drops b: a -> b and its evidence retire.
            event("COMPLETE", &at(20), &uuid(base + 2), &other, vec![], vec![lifecycle(d("b"), "DROP", None)]),
            // a -> b again, first asserted by r3 now; its FAIL retires it (and a -> c stays r1's).
            event("START", &at(30), &uuid(base + 3), &job, vec![d("a")], vec![d("b"), d("c")]),
            event("FAIL", &at(40), &uuid(base + 3), &job, vec![], vec![]),
            // The job's design-time lineage, twice: the second replaces the first.
            design.clone(),
            {
                let mut again = design.clone();
                again["inputs"] = json!([d("a")]);
                again
            },
            // Another job renames c to e: a -> c moves to a -> e.
            event(
                "COMPLETE",
                &at(50),
                &uuid(base + 4),
                &other,
                vec![],
                vec![lifecycle(d("e"), "RENAME", Some(json!({"namespace": NS, "name": format!("db.public.{p}_c")})))],
            ),
            // The job completes with a -> e only: what it asserted before retires.
            event("COMPLETE", &at(60), &uuid(base + 5), &job, vec![d("a")], vec![d("e")]),
        ]
    };
    for e in events("w1", 500) {
        app.ingest(e).await;
    }
    app.ingest(Value::Array(events("w2", 600))).await;

    // Every edge of a copy's tables with its evidence, by table position, run ids made neutral.
    let observed = |own: Vec<i64>, p: &'static str, base: u32| {
        let app = &app;
        async move {
            let position = |c: &Value| own.iter().position(|t| Some(*t) == c.as_i64()).map_or(-1, |p| p as i64);
            let mut edges = Vec::new();
            for &c in &own {
                let answer = app
                    .ok(
                        "query($c: Int!) { edges(containerId: $c, includeRetired: true, size: 200) { items {
                           sourceContainerId targetContainerId retired: retiredAt intervals { from }
                           evidence { evidenceType jobName runId details retired: retiredAt } } } }",
                        json!({"c": c}),
                    )
                    .await;
                for e in answer["edges"]["items"].as_array().unwrap() {
                    let mut evidence: Vec<Value> = e["evidence"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| {
                            json!({
                                "type": v["evidenceType"], "job": v["jobName"], "run": v["runId"],
                                "firstRun": v["details"]["firstRunId"], "state": v["details"]["runState"],
                                "retired": !v["retired"].is_null(),
                            })
                        })
                        .collect();
                    evidence.sort_by_key(|v| v.to_string());
                    edges.push(json!({
                        "source": position(&e["sourceContainerId"]),
                        "target": position(&e["targetContainerId"]),
                        "retired": !e["retired"].is_null(),
                        "intervals": e["intervals"].as_array().unwrap().len(),
                        "evidence": evidence,
                    }));
                }
            }
            edges.sort_by_key(|v| v.to_string());
            edges.dedup();
            let mut text = Value::Array(edges).to_string().replace(&format!("{p}_"), "P_");
            for r in 1..=9 {
                text = text.replace(&uuid(base + r), &format!("run-{r}"));
            }
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let one_by_one = observed(ids[..5].to_vec(), "w1", 500).await;
    let batched = observed(ids[5..].to_vec(), "w2", 600).await;
    assert_eq!(batched, one_by_one, "one request:\n{batched:#}\none per request:\n{one_by_one:#}");
    let edge = |s: i64, t: i64| {
        one_by_one
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["source"] == s && e["target"] == t)
            .cloned()
            .unwrap_or_default()
    };
    // a -> b: dropped, asserted again by run 3, retired by its FAIL.
    assert_eq!(edge(0, 1)["retired"], true, "{one_by_one:#}");
    assert_eq!(edge(0, 1)["intervals"], 2, "{one_by_one:#}");
    // a -> e: moved there by the RENAME and asserted by the last COMPLETE.
    assert_eq!(edge(0, 4)["retired"], false, "{one_by_one:#}");
}
