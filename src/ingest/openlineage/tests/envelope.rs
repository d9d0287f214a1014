//! The event rules of seed 000: every rejection names its JSON pointer and says what is wrong.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::super::{validate, EventKind, Limits, RunState, ValidationIssue, MAX_ISSUES};
use super::{errors, now, ok, remove, run_event, set, single_error};

fn issue(pointer: &str, message: &str) -> ValidationIssue {
    ValidationIssue::new(pointer, message)
}

#[test]
fn a_complete_run_event_is_read() {
    let e = ok(&run_event());
    assert_eq!(e.kind, EventKind::Run);
    assert_eq!(e.kind.as_str(), "run_event");
    assert_eq!(e.event_type, Some(RunState::Complete));
    assert_eq!(e.event_time, DateTime::parse_from_rfc3339("2025-12-31T23:00:00Z").unwrap().with_timezone(&Utc));
    assert_eq!(e.producer, "https://github.com/acme/exporter");
    assert_eq!(e.schema_url, "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent");
    assert_eq!(e.run_id.as_deref(), Some("3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90"));
    let job = e.job.as_ref().unwrap();
    assert_eq!((job.namespace.as_str(), job.name.as_str()), ("nightly", "load_orders"));
    assert_eq!(e.inputs.len(), 1);
    assert_eq!(e.inputs[0].namespace, "postgres://db:5432");
    assert_eq!(e.inputs[0].name, "shop.public.raw_orders");
    assert_eq!(e.outputs[0].name, "shop.public.orders");
    assert!(e.dataset.is_none() && e.parent.is_none() && e.job_sql.is_none());
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(e.relationship_count(), 1);
}

#[test]
fn an_event_must_be_an_object() {
    for (v, found) in
        [(json!([]), "an array"), (json!("x"), "a string"), (json!(null), "null"), (json!(1.5), "a number")]
    {
        assert_eq!(single_error(&v), issue("", &format!("an event must be a JSON object; found {found}")));
    }
}

#[test]
fn kinds_are_told_apart_by_structure() {
    let mut job_event = run_event();
    remove(&mut job_event, "/run");
    set(&mut job_event, "/eventType", json!("not checked for job events"));
    let e = ok(&job_event);
    assert_eq!((e.kind, e.kind.as_str()), (EventKind::Job, "job_event"));
    assert_eq!(e.event_type, None);
    assert_eq!(e.run_id, None);
    assert_eq!(e.inputs.len(), 1);

    // `"run": null` is no run.
    let mut null_run = run_event();
    set(&mut null_run, "/run", Value::Null);
    assert_eq!(ok(&null_run).kind, EventKind::Job);

    let dataset_event = json!({
        "eventTime": "2025-01-01T00:00:00Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": { "namespace": "s3://bucket", "name": "events/2025" }
    });
    let e = ok(&dataset_event);
    assert_eq!((e.kind, e.kind.as_str()), (EventKind::Dataset, "dataset_event"));
    assert_eq!(e.dataset.as_ref().unwrap().name, "events/2025");
    assert!(e.job.is_none() && e.inputs.is_empty());

    // The schema URL does not override the structure.
    let mut mislabelled = run_event();
    set(
        &mut mislabelled,
        "/schemaURL",
        json!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"),
    );
    assert_eq!(ok(&mislabelled).kind, EventKind::Run);
}

#[test]
fn an_event_of_no_kind_is_rejected_at_the_root() {
    let mut e = run_event();
    for k in ["run", "job", "inputs", "outputs"] {
        remove(&mut e, &format!("/{k}"));
    }
    set(&mut e, "/schemaURL", json!("https://example.com/custom-schema.json"));
    assert_eq!(
        single_error(&e),
        issue("", "the event is not a RunEvent (with \"run\" and \"job\"), a JobEvent (with \"job\") or a DatasetEvent (with \"dataset\")")
    );
}

#[test]
fn the_schema_url_names_the_kind_when_the_structure_cannot() {
    let mut e = run_event();
    for k in ["run", "job", "inputs", "outputs"] {
        remove(&mut e, &format!("/{k}"));
    }
    assert_eq!(
        errors(&e),
        vec![issue("/run", "missing required property \"run\""), issue("/job", "missing required property \"job\"")]
    );
    set(&mut e, "/schemaURL", json!("https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/JobEvent"));
    assert_eq!(errors(&e), vec![issue("/job", "missing required property \"job\"")]);
    set(&mut e, "/schemaURL", json!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"));
    assert_eq!(errors(&e), vec![issue("/dataset", "missing required property \"dataset\"")]);
}

#[test]
fn a_run_event_needs_its_job() {
    let mut e = run_event();
    remove(&mut e, "/job");
    assert_eq!(single_error(&e), issue("/job", "missing required property \"job\""));
    set(&mut e, "/job", json!("nightly.load_orders"));
    assert_eq!(single_error(&e), issue("/job", "\"job\" must be an object; found a string"));
    set(&mut e, "/run", json!([]));
    set(&mut e, "/job", json!({"namespace": "n", "name": "j"}));
    assert_eq!(single_error(&e), issue("/run", "\"run\" must be an object; found an array"));
}

const HINT: &str = "an RFC 3339 date-time with a timezone offset or Z is required, like 2024-05-01T12:00:00Z";

fn time_error(value: Value) -> ValidationIssue {
    let mut e = run_event();
    set(&mut e, "/eventTime", value);
    single_error(&e)
}

fn time_ok(value: &str) -> DateTime<Utc> {
    let mut e = run_event();
    set(&mut e, "/eventTime", json!(value));
    ok(&e).event_time
}

#[test]
fn event_time_must_be_rfc_3339_with_an_offset() {
    let mut e = run_event();
    remove(&mut e, "/eventTime");
    assert_eq!(single_error(&e), issue("/eventTime", "missing required property \"eventTime\""));
    assert_eq!(
        time_error(json!(1_700_000_000)),
        issue("/eventTime", &format!("\"eventTime\" must be a string; found a number; {HINT}"))
    );
    assert_eq!(time_error(json!(null)).message, format!("\"eventTime\" must be a string; found null; {HINT}"));
    let cases = [
        ("1700000000", "is a number, not a date-time"),
        ("1700000000.5", "is a number, not a date-time"),
        ("2024-01-01", "is a date without a time of day"),
        ("2020-01-01T00:00:00", "has no timezone offset or Z"),
        ("2021-11-03T10:53:52.427343", "has no timezone offset or Z"),
        ("2020-01-01 00:00:00Z", "separates the date and the time with a space instead of 'T'"),
        ("2020-01-01 00:00:00", "separates the date and the time with a space instead of 'T'"),
        ("2020-01-01T00:00:00+0000", "does not end with a timezone offset as Z or +HH:MM"),
        ("2020-01-01T00:00:00 Z", "does not end with a timezone offset as Z or +HH:MM"),
        ("2020-01-01T00:00:00ZZ", "does not end with a timezone offset as Z or +HH:MM"),
        ("2020-01-01T00:00Z", "does not have a time of day as HH:MM:SS"),
        ("2020-01-01T00:00:00.Z", "has a '.' without fractional seconds"),
        ("2020-01-01X00:00:00Z", "is not a date-time (the date must be followed by 'T' and the time)"),
        ("yesterday", "is not a date-time"),
        ("", "is not a date-time"),
        ("2024-02-30T00:00:00Z", "is not a valid date-time (input is out of range)"),
        ("2024-01-01T25:00:00Z", "is not a valid date-time (input is out of range)"),
    ];
    for (value, why) in cases {
        let got = time_error(json!(value));
        assert_eq!(got.pointer, "/eventTime", "{value}");
        assert_eq!(got.message, format!("\"eventTime\" \"{value}\" {why}; {HINT}"), "{value}");
    }
}

#[test]
fn event_time_forms_that_are_rfc_3339() {
    let utc = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
    assert_eq!(time_ok("2020-08-30T09:00:00.000+10:00"), utc("2020-08-29T23:00:00Z"));
    assert_eq!(time_ok("2020-08-30t09:00:00z"), utc("2020-08-30T09:00:00Z"));
    assert_eq!(time_ok("2024-08-06T13:26:49.98Z"), utc("2024-08-06T13:26:49.980Z"));
    assert_eq!(time_ok("2024-11-20T19:45:47.102778123Z"), utc("2024-11-20T19:45:47.102778123Z"));
    assert_eq!(time_ok("2025-06-01T12:00:00-07:00"), utc("2025-06-01T19:00:00Z"));
    // Long ago is fine.
    assert_eq!(time_ok("1970-01-01T00:00:00Z"), utc("1970-01-01T00:00:00Z"));
}

#[test]
fn event_time_at_most_five_minutes_ahead() {
    let at = |d: Duration| (now() + d).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    time_ok(&at(Duration::minutes(5)));
    let got = time_error(json!(at(Duration::minutes(5) + Duration::seconds(1))));
    assert_eq!(
        got,
        issue(
            "/eventTime",
            "\"eventTime\" \"2026-01-01T00:05:01.000Z\" is 301 seconds after the server's time 2026-01-01T00:00:00Z; at most 300 seconds in the future are accepted"
        )
    );
    let far = time_error(json!("9999-12-31T23:59:59Z"));
    assert!(far.message.contains("seconds after the server's time"), "{far:?}");
    // The limit is the caller's.
    let mut e = run_event();
    set(&mut e, "/eventTime", json!(at(Duration::hours(1))));
    let limits = Limits { max_future: Duration::hours(2), ..Limits::default() };
    assert!(validate(&e, now(), &limits).is_ok());
}

fn uri_error(field: &str, value: Value) -> ValidationIssue {
    let mut e = run_event();
    set(&mut e, &format!("/{field}"), value);
    single_error(&e)
}

#[test]
fn producer_and_schema_url_must_be_absolute_uris() {
    let mut e = run_event();
    remove(&mut e, "/producer");
    assert_eq!(single_error(&e), issue("/producer", "missing required property \"producer\" (an absolute URI)"));
    // A missing schemaURL (1-0-x producers) is a warning; a present one must be absolute.
    let mut e = run_event();
    remove(&mut e, "/schemaURL");
    let accepted = ok(&e);
    assert_eq!(accepted.warnings.iter().map(|w| w.pointer.as_str()).collect::<Vec<_>>(), vec!["/schemaURL"]);
    for field in ["producer", "schemaURL"] {
        let p = format!("/{field}");
        assert_eq!(
            uri_error(field, json!(42)),
            issue(&p, &format!("\"{field}\" must be an absolute URI string; found a number"))
        );
        let cases = [
            ("openlineage-python", "it has no scheme (such as https:)"),
            ("/spec/OpenLineage.json", "it has no scheme (such as https:)"),
            ("1http://example.com", "it has no scheme (such as https:)"),
            ("://example.com", "it has no scheme (such as https:)"),
            ("", "it is empty"),
            ("https://example.com/a b", "it contains ' ', which a URI cannot hold unescaped"),
            (" https://example.com", "it contains ' ', which a URI cannot hold unescaped"),
            ("https://example.com/{{ x }}", "it contains '{', which a URI cannot hold unescaped"),
            ("https://", "empty host"),
        ];
        for (value, why) in cases {
            assert_eq!(
                uri_error(field, json!(value)),
                issue(&p, &format!("\"{field}\" \"{value}\" is not an absolute URI: {why}")),
                "{value}"
            );
        }
        for value in [
            "http://test.schema.url",
            "urn:openlineage:producer",
            "https://openlineage.io/spec/1-0-1/OpenLineage.json#/definitions/RunEvent",
            "git+ssh://git@github.com/acme/etl.git",
            "https://example.com/é",
        ] {
            let mut e = run_event();
            set(&mut e, &p, json!(value));
            ok(&e);
        }
    }
}

#[test]
fn run_ids_must_be_non_empty_strings_and_should_be_uuids() {
    let mut e = run_event();
    remove(&mut e, "/run/runId");
    assert_eq!(single_error(&e), issue("/run/runId", "missing required property \"runId\""));
    set(&mut e, "/run/runId", json!(7));
    assert_eq!(single_error(&e), issue("/run/runId", "\"runId\" must be a string; found a number"));
    set(&mut e, "/run/runId", json!(" "));
    assert_eq!(single_error(&e), issue("/run/runId", "\"runId\" must not be empty"));
    set(&mut e, "/run/runId", json!("{{ any(result) }}"));
    let got = ok(&e);
    assert_eq!(got.run_id.as_deref(), Some("{{ any(result) }}"));
    assert_eq!(
        got.warnings,
        vec![issue("/run/runId", "runId \"{{ any(result) }}\" is not a UUID; it is kept as sent")]
    );
    // UUIDs in upper case, or of any version, are UUIDs.
    set(&mut e, "/run/runId", json!("019127DE-FD25-7707-BFA4-3EC02693A531"));
    assert!(ok(&e).warnings.is_empty());
}

#[test]
fn job_names_must_be_non_empty_strings() {
    let mut e = run_event();
    set(&mut e, "/job", json!({"namespace": "", "name": ["x"]}));
    assert_eq!(
        errors(&e),
        vec![
            issue("/job/namespace", "\"namespace\" must not be empty"),
            issue("/job/name", "\"name\" must be a string; found an array"),
        ]
    );
    set(&mut e, "/job", json!({}));
    assert_eq!(
        errors(&e),
        vec![
            issue("/job/namespace", "missing required property \"namespace\""),
            issue("/job/name", "missing required property \"name\""),
        ]
    );
}

#[test]
fn event_type_is_optional_and_upper_case() {
    let mut e = run_event();
    remove(&mut e, "/eventType");
    assert_eq!(ok(&e).event_type, None);
    set(&mut e, "/eventType", Value::Null);
    assert_eq!(ok(&e).event_type, None);
    for (s, state) in [
        ("START", RunState::Start),
        ("RUNNING", RunState::Running),
        ("COMPLETE", RunState::Complete),
        ("ABORT", RunState::Abort),
        ("FAIL", RunState::Fail),
        ("OTHER", RunState::Other),
    ] {
        set(&mut e, "/eventType", json!(s));
        assert_eq!(ok(&e).event_type, Some(state));
        assert_eq!(state.as_str(), s);
    }
    for bad in ["complete", "Complete", "DONE", ""] {
        set(&mut e, "/eventType", json!(bad));
        assert_eq!(
            single_error(&e),
            issue(
                "/eventType",
                &format!(
                    "\"eventType\" \"{bad}\" is not one of START, RUNNING, COMPLETE, ABORT, FAIL or OTHER (upper case)"
                )
            )
        );
    }
    set(&mut e, "/eventType", json!(3));
    assert_eq!(
        single_error(&e),
        issue(
            "/eventType",
            "\"eventType\" must be a string, one of START, RUNNING, COMPLETE, ABORT, FAIL or OTHER; found a number"
        )
    );
}

#[test]
fn datasets_need_a_namespace_and_a_name() {
    let mut e = run_event();
    set(&mut e, "/inputs", json!({"namespace": "n", "name": "d"}));
    assert_eq!(single_error(&e), issue("/inputs", "\"inputs\" must be an array of datasets; found an object"));
    set(&mut e, "/inputs", Value::Null);
    assert!(ok(&e).inputs.is_empty());
    set(
        &mut e,
        "/inputs",
        json!(["n.d", {"name": "d"}, {"namespace": "n", "name": ""}, {"namespace": "n", "name": "d", "facets": []}]),
    );
    set(&mut e, "/outputs", json!([{"namespace": 1, "name": "d"}]));
    assert_eq!(
        errors(&e),
        vec![
            issue("/inputs/0", "a dataset must be an object; found a string"),
            issue("/inputs/1/namespace", "missing required property \"namespace\""),
            issue("/inputs/2/name", "\"name\" must not be empty"),
            issue("/inputs/3/facets", "\"facets\" must be an object; found an array"),
            issue("/outputs/0/namespace", "\"namespace\" must be a string; found a number"),
        ]
    );
    let mut d = json!({
        "eventTime": "2025-01-01T00:00:00Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": { "namespace": "s3://bucket" }
    });
    assert_eq!(single_error(&d), issue("/dataset/name", "missing required property \"name\""));
    set(&mut d, "/dataset", json!(5));
    assert_eq!(single_error(&d), issue("/dataset", "a dataset must be an object; found a number"));
}

#[test]
fn facet_containers_must_be_objects() {
    let mut e = run_event();
    set(&mut e, "/run/facets", json!("x"));
    set(&mut e, "/job/facets", json!([1]));
    assert_eq!(
        errors(&e),
        vec![
            issue("/run/facets", "\"facets\" must be an object; found a string"),
            issue("/job/facets", "\"facets\" must be an object; found an array"),
        ]
    );
    set(&mut e, "/run/facets", Value::Null);
    set(&mut e, "/job/facets", json!({}));
    ok(&e);
}

#[test]
fn all_errors_are_reported_at_once() {
    let e = json!({
        "eventTime": "2020-01-01T00:00:00",
        "producer": "me",
        "run": {},
        "job": {"namespace": "n"},
        "eventType": "DONE"
    });
    assert_eq!(
        errors(&e).iter().map(|i| i.pointer.as_str()).collect::<Vec<_>>(),
        vec!["/eventTime", "/producer", "/run/runId", "/eventType", "/job/name"]
    );
}

#[test]
fn errors_are_capped() {
    let mut e = run_event();
    set(&mut e, "/inputs", Value::Array(vec![json!(1); 500]));
    let issues = errors(&e);
    assert_eq!(issues.len(), MAX_ISSUES + 1);
    assert_eq!(issues[0], issue("/inputs/0", "a dataset must be an object; found a number"));
    assert_eq!(issues[MAX_ISSUES], issue("", "400 more issues are not listed"));
}

fn datasets(n: usize) -> Value {
    Value::Array((0..n).map(|i| json!({"namespace": "ns", "name": format!("t{i}")})).collect())
}

#[test]
fn table_relationships_count_inputs_times_outputs() {
    let mut e = run_event();
    set(&mut e, "/inputs", datasets(100));
    set(&mut e, "/outputs", datasets(100));
    assert_eq!(ok(&e).relationship_count(), 10_000);
    set(&mut e, "/inputs", datasets(101));
    assert_eq!(
        single_error(&e),
        issue(
            "",
            "the event attempts 10100 dataset and field relationships (101 inputs x 100 outputs, plus column lineage); at most 10000 are accepted"
        )
    );
}

fn column_lineage(pairs: usize) -> Value {
    let input_fields: Vec<Value> =
        (0..pairs).map(|i| json!({"namespace": "ns", "name": "src", "field": format!("c{i}")})).collect();
    json!({"fields": {"out": {"inputFields": input_fields}}})
}

#[test]
fn column_pairs_count_towards_the_limit() {
    let limits = Limits { max_relationships: 10, ..Limits::default() };
    let mut e = run_event(); // 1 x 1
    set(&mut e, "/outputs/0/facets", json!({"columnLineage": column_lineage(9)}));
    assert_eq!(validate(&e, now(), &limits).unwrap().relationship_count(), 10);
    set(&mut e, "/outputs/0/facets", json!({"columnLineage": column_lineage(10)}));
    let issues = validate(&e, now(), &limits).unwrap_err();
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].pointer, "");
    assert!(issues[0].message.starts_with("the event attempts 11 dataset and field relationships"), "{issues:?}");
    assert!(issues[0].message.ends_with("at most 10 are accepted"));
}

#[test]
fn dataset_wide_lineage_counts_once_per_output_field() {
    let mut e = run_event();
    let wide = json!([
        {"namespace": "ns", "name": "src", "field": "region"},
        {"namespace": "ns", "name": "src", "field": "day"}
    ]);
    // No field of the output is named: each entry counts once.
    set(&mut e, "/outputs/0/facets", json!({"columnLineage": {"fields": {}, "dataset": wide}}));
    assert_eq!(ok(&e).relationship_count(), 1 + 2);
    // Three schema fields, one of them also a column-lineage output: 2 entries x 3 fields + 1 pair.
    set(
        &mut e,
        "/outputs/0/facets",
        json!({
            "schema": {"fields": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
            "columnLineage": {
                "fields": {"a": {"inputFields": [{"namespace": "ns", "name": "src", "field": "x"}]}},
                "dataset": wide
            }
        }),
    );
    assert_eq!(ok(&e).relationship_count(), 1 + 1 + 6);
}
