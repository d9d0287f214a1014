//! Fixtures: the shared reference corpus of real producers' events, and the project's own.
//!
//! The shared corpus lives outside the repository (`/work/shared/fixtures/openlineage`, or
//! `TRIBUTARY_SHARED_FIXTURES`). It is always there in CI, so its absence fails these tests
//! instead of skipping them. What each file must give follows from seed 000's rules: producers
//! bend the spec, and the tests say which bends are accepted (no eventType, COMPLETE without
//! START, legacy column lineage, 220 KB events) and which are rejected (an eventTime without a
//! timezone, a missing producer or schemaURL), with a patch showing the rest then applies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::super::{
    derived, event_fingerprint, parse_body, validate, Event, EventKind, LifecycleChange, Limits, RunState,
    TransformationKind, ValidationIssue,
};
use super::now;

fn shared_dir() -> PathBuf {
    let dir = std::env::var_os("TRIBUTARY_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/work/shared/fixtures/openlineage"));
    assert!(
        dir.is_dir(),
        "the shared OpenLineage fixtures are missing at {} (set TRIBUTARY_SHARED_FIXTURES); CI always has them",
        dir.display()
    );
    dir
}

fn own_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openlineage")
}

/// Every `.json` file under `dir`, recursively, sorted by path.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A body as the endpoint would parse it.
fn events_of(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap();
    match parse_body(&bytes, &Limits::default()) {
        Ok(body) => body.events,
        Err(e) => panic!("{} does not parse: {e}", path.display()),
    }
}

fn shared(name: &str) -> Vec<Value> {
    events_of(&shared_dir().join(name))
}

fn check(event: &Value) -> Result<Event, Vec<ValidationIssue>> {
    validate(event, now(), &Limits::default())
}

fn valid(event: &Value) -> Event {
    check(event).unwrap_or_else(|issues| panic!("expected valid, got {issues:#?}"))
}

fn pointers(issues: &[ValidationIssue]) -> Vec<&str> {
    issues.iter().map(|i| i.pointer.as_str()).collect()
}

fn rejected_at(event: &Value) -> Vec<String> {
    match check(event) {
        Ok(e) => panic!("expected a rejection, got {e:#?}"),
        Err(issues) => issues.into_iter().map(|i| i.pointer).collect(),
    }
}

/// A UUID-shaped id derived from a job's identity, so every event of one job shares a run and a
/// child's parent run is its parent job's run.
fn run_id_for(namespace: &str, name: &str) -> String {
    let digest = Sha256::digest(format!("{namespace}\u{1f}{name}").as_bytes());
    let h: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-5{}-a{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}

/// What a producer would have sent had it filled in what the corpus leaves out: dbt's
/// `"{{ any(result) }}"` run ids (from the integration tests' matcher syntax) become ids derived
/// from the job, and a missing `producer` / `schemaURL` is added.
fn patched(mut event: Value) -> Value {
    const PLACEHOLDER: &str = "{{ any(result) }}";
    let job_id = |v: &Value| {
        (v["namespace"].as_str().unwrap_or_default().to_string(), v["name"].as_str().unwrap_or_default().to_string())
    };
    let (ns, name) = job_id(&event["job"]);
    if event.pointer("/run/runId").and_then(Value::as_str) == Some(PLACEHOLDER) {
        event["run"]["runId"] = json!(run_id_for(&ns, &name));
    }
    if event.pointer("/run/facets/parent/run/runId").and_then(Value::as_str) == Some(PLACEHOLDER) {
        let (pns, pname) = job_id(&event["run"]["facets"]["parent"]["job"]);
        event["run"]["facets"]["parent"]["run"]["runId"] = json!(run_id_for(&pns, &pname));
    }
    let obj = event.as_object_mut().unwrap();
    obj.entry("producer").or_insert(json!("https://github.com/OpenLineage/OpenLineage/tree/1.25.0/integration/dbt"));
    let kind = if obj.contains_key("run") { "RunEvent" } else { "JobEvent" };
    obj.entry("schemaURL")
        .or_insert(json!(format!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/{kind}")));
    event
}

#[test]
fn every_shared_fixture_parses() {
    let files = json_files(&shared_dir());
    assert!(files.len() >= 23, "expected the whole corpus, found {files:?}");
    let mut events = 0;
    for f in &files {
        let n = events_of(f).len();
        assert!(n >= 1, "{}", f.display());
        events += n;
    }
    assert_eq!(events, 5 + 72 + 9 + 8);
}

#[test]
fn shared_01_full_run_event_is_applied() {
    let e = valid(&shared("01_client_full_run_event.json")[0]);
    assert_eq!((e.kind, e.event_type), (EventKind::Run, Some(RunState::Complete)));
    assert_eq!(e.run_id.as_deref(), Some("ea041791-68bc-4ae1-bd89-4c8106a157e4"));
    let parent = e.parent.as_ref().unwrap();
    assert_eq!(parent.run_id, "3f5e83fa-3480-44ff-99c5-ff943904e5e8");
    assert_eq!((parent.job.namespace.as_str(), parent.job.name.as_str()), ("my-scheduler-namespace", "myjob.mytask"));
    assert_eq!(e.inputs.len(), 1);
    assert_eq!(e.outputs.len(), 1);
    let schema = &e.inputs[0].schema;
    assert_eq!(schema.len(), 1);
    assert_eq!(
        (schema[0].name.as_str(), schema[0].data_type.as_deref(), schema[0].description.as_deref()),
        ("column1", Some("VARCHAR"), Some("string"))
    );
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(e.relationship_count(), 1);
}

#[test]
fn shared_02_and_03_have_naive_event_times() {
    for name in ["02_client_job_event.json", "03_client_dataset_event.json"] {
        let event = &shared(name)[0];
        let issues = check(event).unwrap_err();
        assert_eq!(issues.len(), 1, "{name}: {issues:?}");
        assert_eq!(issues[0].pointer, "/eventTime");
        assert!(issues[0]
            .message
            .starts_with("\"eventTime\" \"2021-11-03T10:53:52.427343\" has no timezone offset or Z"));
    }
    // With a timezone, the rest of each is valid.
    let mut job = shared("02_client_job_event.json").remove(0);
    job["eventTime"] = json!("2021-11-03T10:53:52.427343Z");
    let e = valid(&job);
    assert_eq!((e.kind, e.event_type, e.run_id.as_ref()), (EventKind::Job, None, None));
    assert_eq!((e.inputs[0].name.as_str(), e.outputs[0].name.as_str()), ("dataset_a", "dataset_b"));
    assert_eq!(e.outputs[0].schema[0].data_type.as_deref(), Some("string"));
    let mut ds = shared("03_client_dataset_event.json").remove(0);
    ds["eventTime"] = json!("2021-11-03T10:53:52.427343+00:00");
    let e = valid(&ds);
    assert_eq!(e.kind, EventKind::Dataset);
    let d = e.dataset.unwrap();
    assert_eq!(d.schema.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
}

#[test]
fn shared_12_dbt_events_lack_producer_and_schema_url() {
    let events = shared("12_dbt_postgres_run_72events.json");
    assert_eq!(events.len(), 72);
    for (i, event) in events.iter().enumerate() {
        assert_eq!(rejected_at(event), vec!["/producer"], "event {i}");
    }
}

#[test]
fn shared_12_dbt_events_validate_once_patched() {
    let events: Vec<Event> =
        shared("12_dbt_postgres_run_72events.json").into_iter().map(|e| valid(&patched(e))).collect();
    assert_eq!(events.len(), 72);
    assert!(events.iter().all(|e| e.kind == EventKind::Run && e.warnings.is_empty()));
    let states: Vec<RunState> = events.iter().filter_map(|e| e.event_type).collect();
    assert_eq!(states.iter().filter(|s| **s == RunState::Start).count(), 36);
    assert_eq!(states.iter().filter(|s| **s == RunState::Complete).count(), 36);
    // The three-level parent chain closes: every parent is a job of the file, with its run.
    let runs: BTreeMap<(String, String), String> = events
        .iter()
        .map(|e| {
            let j = e.job.clone().unwrap();
            ((j.namespace, j.name), e.run_id.clone().unwrap())
        })
        .collect();
    assert_eq!(runs.len(), 36);
    let mut parents = BTreeSet::new();
    for e in &events {
        if let Some(p) = &e.parent {
            assert_eq!(runs.get(&(p.job.namespace.clone(), p.job.name.clone())), Some(&p.run_id));
            parents.insert(p.job.name.clone());
        }
    }
    assert_eq!(parents.len(), 6, "{parents:?}");
    assert!(parents.contains("dbt-run-jaffle_shop"));
    // The query jobs carry their SQL.
    assert_eq!(events.iter().filter(|e| e.job_sql.is_some()).count(), 60);
    // Model runs name their tables.
    let customers = events
        .iter()
        .find(|e| {
            e.job.as_ref().unwrap().name == "model.jaffle_shop.customers" && e.event_type == Some(RunState::Complete)
        })
        .unwrap();
    assert_eq!(customers.outputs[0].namespace, "postgres://postgres:5432");
    assert_eq!(customers.outputs[0].name, "postgres.public.customers");
    assert!(customers.outputs[0].description.is_some());
    assert!(!customers.outputs[0].schema.is_empty());
    assert_eq!(
        customers.inputs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        vec!["postgres.public.stg_customers", "postgres.public.stg_orders", "postgres.public.stg_payments"]
    );
    assert_eq!(customers.relationship_count(), 3);
}

#[test]
fn shared_21_spark_sequence_reads_column_lineage() {
    let dir = shared_dir().join("21_compat_spark_cll_sequence");
    let events: Vec<Event> = (1..=9).map(|i| valid(&events_of(&dir.join(format!("{i}.json")))[0])).collect();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.unwrap().as_str()).collect();
    assert_eq!(
        types,
        ["START", "START", "COMPLETE", "COMPLETE", "START", "RUNNING", "RUNNING", "COMPLETE", "COMPLETE"]
    );
    for e in &events {
        assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    }
    // The CREATE TABLEs.
    for e in &events[2..4] {
        let out = &e.outputs[0];
        assert_eq!(out.lifecycle.as_ref().unwrap().change, LifecycleChange::Create);
        assert_eq!(out.symlinks[0].namespace, "file:/tmp/cll_test");
        assert!(out.symlinks[0].name.starts_with("default.cll_source"));
        assert_eq!(out.symlinks[0].kind.as_deref(), Some("TABLE"));
    }
    // The CTAS, complete.
    let ctas = &events[7];
    assert_eq!(ctas.parent.as_ref().unwrap().job.name, "open_lineage_integration_create_table");
    let out = &ctas.outputs[0];
    assert_eq!((out.namespace.as_str(), out.name.as_str()), ("file", "/tmp/cll_test/tbl1"));
    assert_eq!(out.symlinks[0].name, "default.tbl1");
    assert_eq!(out.schema.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["ident", "trans", "agg"]);
    let per_output: BTreeMap<&str, usize> = out.column_lineage.iter().fold(BTreeMap::new(), |mut m, c| {
        *m.entry(c.output_field.as_str()).or_default() += 1;
        m
    });
    assert_eq!(per_output, BTreeMap::from([("agg", 4), ("ident", 3), ("trans", 3)]));
    assert!(out.dataset_wide.is_empty());
    let edge = |o: &str, input: &str, f: &str| {
        out.column_lineage
            .iter()
            .find(|c| c.output_field == o && c.input.name == input && c.input.field == f)
            .unwrap_or_else(|| panic!("no edge {input}.{f} -> {o}"))
    };
    // Legacy (non dataset-wide) mode: the copied column also lists the query's joins and filters.
    let ident = edge("ident", "/tmp/cll_test/cll_source1", "a");
    assert_eq!(ident.input.transformations.len(), 4);
    assert_eq!(derived(&ident.input.transformations), Some(false));
    let agg = edge("agg", "/tmp/cll_test/cll_source2", "c");
    assert_eq!(agg.input.transformations[0].subtype.as_deref(), Some("AGGREGATION"));
    assert_eq!(derived(&agg.input.transformations), Some(true));
    let trans = edge("trans", "/tmp/cll_test/cll_source1", "b");
    assert_eq!(derived(&trans.input.transformations), Some(true));
    let join = edge("trans", "/tmp/cll_test/cll_source2", "a");
    assert!(join.input.transformations.iter().all(|t| t.kind == TransformationKind::Indirect));
    assert!(edge("ident", "/tmp/cll_test/cll_source1", "a")
        .pointer
        .starts_with("/outputs/0/facets/columnLineage/fields/ident/inputFields/"));
    // 2 inputs x 1 output + 10 column pairs.
    assert_eq!(ctas.relationship_count(), 12);
    assert_eq!(ctas.inputs.iter().map(|d| d.symlinks.len()).sum::<usize>(), 2);
}

#[test]
fn shared_24_large_event_is_applied() {
    let e = valid(&shared("24_marquez_event_large_220KB.json")[0]);
    assert_eq!(e.job_sql.as_deref(), Some("SELECT * FROM foo"));
    assert_eq!(e.parent.as_ref().unwrap().run_id, "3f5e83fa-3480-44ff-99c5-ff943904e5e8");
    assert_eq!(e.outputs[0].description.as_deref(), Some("canonical representation of entity Foo"));
    assert_eq!(e.outputs[0].schema[0].name, "column1");
}

#[test]
fn shared_25_required_only_is_applied() {
    let e = valid(&shared("25_marquez_event_required_only.json")[0]);
    assert_eq!((e.kind, e.event_type), (EventKind::Run, None));
    assert_eq!(e.schema_url, "https://openlineage.io/spec/1-0-1/OpenLineage.json#/definitions/RunEvent");
    assert!(e.inputs.is_empty() && e.outputs.is_empty() && e.warnings.is_empty());
}

#[test]
fn shared_27_apples_lack_schema_url_and_form_a_graph() {
    let files = json_files(&shared_dir().join("27_marquez_apples_graph"));
    assert_eq!(files.len(), 8);
    let mut edges = BTreeSet::new();
    let mut gather_inputs = Vec::new();
    for f in &files {
        let event = events_of(f).remove(0);
        // Accepted as sent: a missing schemaURL is only a warning.
        let as_sent = valid(&event);
        assert_eq!(as_sent.warnings.iter().map(|w| w.pointer.as_str()).collect::<Vec<_>>(), vec!["/schemaURL"]);
        let e = valid(&patched(event));
        assert_eq!(e.event_type, Some(RunState::Complete));
        for i in &e.inputs {
            for o in &e.outputs {
                edges.insert((format!("{}/{}", i.namespace, i.name), format!("{}/{}", o.namespace, o.name)));
            }
        }
        if e.job.as_ref().unwrap().name == "gather_apples" {
            gather_inputs.push(e.inputs[0].name.clone());
        }
    }
    assert_eq!(gather_inputs, ["red.delicious", "crab.apples"], "a job whose inputs change between runs");
    assert!(edges.contains(&("grandmas.kitchen/apple.filling".into(), "grandmas.kitchen/apple.pie".into())));
    assert!(edges.contains(&("grandmas.kitchen/apple.cider".into(), "cupboard/apple.vinegar".into())));
    assert_eq!(edges.len(), 9);
}

#[test]
fn shared_events_have_stable_distinct_fingerprints() {
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for f in json_files(&shared_dir()) {
        for event in events_of(&f) {
            let fp = event_fingerprint(&event);
            // Re-serialised with other spacing and key order, the same event.
            let reparsed: Value = serde_json::from_str(&serde_json::to_string_pretty(&event).unwrap()).unwrap();
            assert_eq!(event_fingerprint(&reparsed), fp);
            seen.insert(fp);
            total += 1;
        }
    }
    // dbt's corpus repeats identical placeholder events; everything else is distinct.
    assert!(seen.len() > 60 && seen.len() <= total, "{} of {total}", seen.len());
}

#[test]
fn own_fixtures_give_their_expected_outcomes() {
    let files: Vec<PathBuf> =
        json_files(&own_dir()).into_iter().filter(|p| !p.to_string_lossy().ends_with(".expected.json")).collect();
    assert!(files.len() >= 7, "{files:?}");
    for f in files {
        let expected_path = f.with_extension("expected.json");
        let expected: Value = serde_json::from_slice(
            &std::fs::read(&expected_path)
                .unwrap_or_else(|e| panic!("{} has no {}: {e}", f.display(), expected_path.display())),
        )
        .unwrap();
        let outcomes = expected["outcomes"].as_array().unwrap();
        let events = events_of(&f);
        assert_eq!(events.len(), outcomes.len(), "{}", f.display());
        for (i, (event, want)) in events.iter().zip(outcomes).enumerate() {
            let at = format!("{} event {i}", f.display());
            match (check(event), want["status"].as_str().unwrap()) {
                (Ok(e), "valid") => {
                    assert_eq!(e.kind.as_str(), want["kind"].as_str().unwrap(), "{at}");
                    assert_eq!(e.relationship_count() as u64, want["relationships"].as_u64().unwrap(), "{at}");
                    let want_warnings: Vec<&str> =
                        want["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
                    assert_eq!(pointers(&e.warnings), want_warnings, "{at}: {:#?}", e.warnings);
                }
                (Err(issues), "rejected") => {
                    let want_errors: Vec<ValidationIssue> = want["errors"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| ValidationIssue::new(e["pointer"].as_str().unwrap(), e["message"].as_str().unwrap()))
                        .collect();
                    assert_eq!(issues, want_errors, "{at}");
                }
                (got, want) => panic!("{at}: expected {want}, got {got:#?}"),
            }
        }
    }
}

#[test]
fn own_fixture_details() {
    let e = valid(&events_of(&own_dir().join("column_lineage_1_2_0.json"))[0]);
    let out = &e.outputs[0];
    let hash = out.column_lineage.iter().find(|c| c.output_field == "customer_hash").unwrap();
    assert!(hash.input.transformations[0].masking);
    assert_eq!(hash.input.transformations[0].description.as_deref(), Some("sha256(customer_email)"));
    assert_eq!(out.dataset_wide.iter().map(|f| f.field.as_str()).collect::<Vec<_>>(), ["order_placed_on", "region"]);
    assert_eq!(e.event_time.to_rfc3339(), "2025-10-09T10:00:00.250+00:00");

    let e = valid(&events_of(&own_dir().join("dataset_event_metadata.json"))[0]);
    let d = e.dataset.unwrap();
    assert_eq!(
        d.schema.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["ID", "ADDRESS", "ADDRESS.CITY", "ADDRESS.ZIP", "EMAIL"]
    );
    assert_eq!(d.symlinks[0].kind.as_deref(), Some("LOCATION"));
    assert_eq!(d.owners.as_ref().unwrap().len(), 2);
    assert_eq!(d.tags.as_ref().unwrap()[1].field.as_deref(), Some("EMAIL"));
    let l = d.lifecycle.unwrap();
    assert_eq!(l.change, LifecycleChange::Rename);
    assert_eq!(l.previous.unwrap().name, "ANALYTICS.CORE.CLIENTS");

    let e = valid(&events_of(&own_dir().join("job_event_design_time.json"))[0]);
    assert!(e.job_sql.unwrap().starts_with("INSERT INTO analytics.public.orders"));
    assert_eq!(e.job_source_code.unwrap().language.as_deref(), Some("python"));

    let both = events_of(&own_dir().join("run_with_parent_and_root.json"));
    let start = valid(&both[0]);
    assert_eq!(start.parent.unwrap().root.unwrap().job.name, "daily_master");
    assert!(valid(&both[1]).parent.unwrap().root.is_none());
}
