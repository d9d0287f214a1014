//! Validation of one OpenLineage event: the envelope rules of seed 000, then the model.
//!
//! Errors reject the event (the caller answers 422 with them); each names its place with a JSON
//! pointer. They are collected, not returned at the first, so a producer sees everything to fix
//! at once. What is checked, and what is deliberately not:
//!
//! - the kind: RunEvent (`run` and `job`), JobEvent (`job`, no `run`), DatasetEvent (`dataset`,
//!   neither). The `schemaURL` fragment (`#/$defs/RunEvent`, `#/definitions/JobEvent`, ...) only
//!   decides when the structure does not, so the missing part can be reported;
//! - `eventTime`: a string in RFC 3339 with an offset or `Z` (never a number, a numeric string, a
//!   date alone, a naive or space-separated timestamp), at most `max_future` after "now";
//! - `producer` and `schemaURL`: present, absolute URIs (a scheme, then `:`);
//! - RunEvent `run.runId` (a non-empty string; not a UUID is a warning), `eventType` (optional,
//!   the spec's upper-case names); `job.namespace` and `job.name` non-empty strings;
//! - datasets: `namespace` and `name` non-empty strings, `facets` an object when present;
//! - the relationship limit ([`Event::relationship_count`]).
//!
//! `facets`, `inputs` and `outputs` of the right type but with malformed content are the facets
//! module's business: warnings, never errors. A property that is `null` is read as absent where
//! it is optional. No check recurses over the input, so no event can overflow the stack.

use chrono::{DateTime, FixedOffset, Utc};
use serde_json::{Map, Value};

use super::facets;
use super::issues::{nonblank, property, Fault, Issues};
use super::job_facets;
use super::model::{Dataset, Event, EventKind, JobFacets, JobRef, RunFacets, RunState, ValidationIssue};
use super::pointer::{index, key, preview, type_name};
use super::Limits;

/// Validates one event (an element of [`super::ParsedBody::events`]) against seed 000's rules
/// and reads it into the model. `now` is the server's time, for the future-`eventTime` rule.
pub fn validate(event: &Value, now: DateTime<Utc>, limits: &Limits) -> Result<Event, Vec<ValidationIssue>> {
    let Some(obj) = event.as_object() else {
        return Err(vec![ValidationIssue::new(
            "",
            format!("an event must be a JSON object; found {}", type_name(event)),
        )]);
    };
    let mut errors = Issues::default();
    let mut warnings = Issues::default();

    let kind = detect_kind(obj, &mut errors);
    let event_time = event_time(obj.get("eventTime"), now, limits, &mut errors);
    let producer = absolute_uri(obj, "producer", &mut errors);
    // Producers built on the 1-0-x spec (Marquez's own fixtures among them) omit schemaURL;
    // one that is sent must be an absolute URI, a missing one is noted and defaulted.
    let schema_url = if matches!(obj.get("schemaURL"), None | Some(Value::Null)) {
        warnings.push("/schemaURL", "schemaURL is missing; the event is read as OpenLineage 2-0-2");
        Some(DEFAULT_SCHEMA_URL.to_string())
    } else {
        absolute_uri(obj, "schemaURL", &mut errors)
    };

    let mut run_id = None;
    let mut event_type = None;
    let mut parent = None;
    let mut run_facets = RunFacets::default();
    if kind == Some(EventKind::Run) {
        if let Some(run) = required_object(obj, "run", "", &mut errors) {
            run_id = required_string(run, "runId", "/run", &mut errors);
            if let Some(id) = &run_id {
                if uuid::Uuid::parse_str(id).is_err() {
                    warnings.push("/run/runId", format!("runId {} is not a UUID; it is kept as sent", preview(id)));
                }
            }
            if let Some(facets_of_run) = optional_object(run, "facets", "/run", &mut errors) {
                parent = facets::parent_facet(facets_of_run, "/run/facets", &mut warnings);
                run_facets = job_facets::run_facets(facets_of_run, "/run/facets", &mut warnings);
            }
        }
        event_type = run_state(obj.get("eventType"), &mut errors);
    }

    let mut job = None;
    let mut job_sql = None;
    let mut job_source_code = None;
    let mut job_facets = JobFacets::default();
    if matches!(kind, Some(EventKind::Run | EventKind::Job)) {
        if let Some(j) = required_object(obj, "job", "", &mut errors) {
            let namespace = required_string(j, "namespace", "/job", &mut errors);
            let name = required_string(j, "name", "/job", &mut errors);
            if let (Some(namespace), Some(name)) = (namespace, name) {
                job = Some(JobRef { namespace, name });
            }
            if let Some(facets_of_job) = optional_object(j, "facets", "/job", &mut errors) {
                (job_sql, job_source_code) = facets::job_facets(facets_of_job, "/job/facets", &mut warnings);
                job_facets = job_facets::job_facets(facets_of_job, "/job/facets", &mut warnings);
            }
        }
    }

    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut dataset = None;
    match kind {
        Some(EventKind::Run | EventKind::Job) => {
            inputs = dataset_list(obj, "inputs", &mut errors, &mut warnings, limits);
            outputs = dataset_list(obj, "outputs", &mut errors, &mut warnings, limits);
        }
        Some(EventKind::Dataset) => match obj.get("dataset") {
            Some(v) if !v.is_null() => dataset = read_dataset(v, "/dataset", &mut errors, &mut warnings, limits),
            _ => errors.push("/dataset", "missing required property \"dataset\""),
        },
        None => {}
    }

    let (Some(kind), Some(event_time), Some(producer), Some(schema_url)) = (kind, event_time, producer, schema_url)
    else {
        return Err(errors.finish());
    };
    let event = Event {
        kind,
        event_type,
        event_time,
        producer,
        schema_url,
        run_id,
        job,
        parent,
        job_sql,
        job_source_code,
        job_facets,
        run_facets,
        inputs,
        outputs,
        dataset,
        warnings: Vec::new(),
    };
    let count = event.relationship_count();
    if count > limits.max_relationships {
        errors.push(
            "",
            format!(
                "the event attempts {count} dataset and field relationships ({} inputs x {} outputs, plus column lineage); at most {} are accepted",
                event.inputs.len(),
                event.outputs.len(),
                limits.max_relationships
            ),
        );
    }
    if !errors.is_empty() {
        return Err(errors.finish());
    }
    Ok(Event { warnings: warnings.finish(), ..event })
}

fn detect_kind(obj: &Map<String, Value>, errors: &mut Issues) -> Option<EventKind> {
    let has = |k: &str| obj.get(k).is_some_and(|v| !v.is_null());
    if has("run") {
        return Some(EventKind::Run);
    }
    if has("job") {
        return Some(EventKind::Job);
    }
    if has("dataset") {
        return Some(EventKind::Dataset);
    }
    // Nothing in the structure says: let the schema URL's fragment name the kind, so the
    // missing part is what gets reported.
    let fragment = obj.get("schemaURL").and_then(Value::as_str).and_then(|s| s.rsplit_once('#')).map(|(_, f)| f);
    match fragment.and_then(|f| f.rsplit('/').next()) {
        Some("RunEvent") => Some(EventKind::Run),
        Some("JobEvent") => Some(EventKind::Job),
        Some("DatasetEvent") => Some(EventKind::Dataset),
        _ => {
            errors.push(
                "",
                "the event is not a RunEvent (with \"run\" and \"job\"), a JobEvent (with \"job\") or a DatasetEvent (with \"dataset\")",
            );
            None
        }
    }
}

const TIME_FORMAT_HINT: &str =
    "an RFC 3339 date-time with a timezone offset or Z is required, like 2024-05-01T12:00:00Z";

fn event_time(v: Option<&Value>, now: DateTime<Utc>, limits: &Limits, errors: &mut Issues) -> Option<DateTime<Utc>> {
    let ptr = "/eventTime";
    let s = match v {
        None => {
            errors.push(ptr, "missing required property \"eventTime\"");
            return None;
        }
        Some(Value::String(s)) => s,
        Some(other) => {
            errors.push(ptr, format!("\"eventTime\" must be a string; found {}; {TIME_FORMAT_HINT}", type_name(other)));
            return None;
        }
    };
    let parsed = match parse_rfc3339(s) {
        Ok(t) => t.with_timezone(&Utc),
        Err(why) => {
            errors.push(ptr, format!("\"eventTime\" {} {why}; {TIME_FORMAT_HINT}", preview(s)));
            return None;
        }
    };
    let ahead = parsed.signed_duration_since(now);
    if ahead > limits.max_future {
        errors.push(
            ptr,
            format!(
                "\"eventTime\" {} is {} seconds after the server's time {}; at most {} seconds in the future are accepted",
                preview(s),
                ahead.num_seconds(),
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                limits.max_future.num_seconds()
            ),
        );
        return None;
    }
    Some(parsed)
}

/// RFC 3339 `date-time` (section 5.6), checked for its shape first so each common mistake gets
/// its own message, then by chrono for the calendar. `T`/`Z` may be lower case, as RFC 3339
/// allows; a space separator, which chrono tolerates, is refused.
fn parse_rfc3339(s: &str) -> Result<DateTime<FixedOffset>, String> {
    let b = s.as_bytes();
    let digits = |from: usize, to: usize| b.get(from..to).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let byte = |i: usize| b.get(i).copied();
    let date_ok = digits(0, 4) && byte(4) == Some(b'-') && digits(5, 7) && byte(7) == Some(b'-') && digits(8, 10);
    if !date_ok {
        if !s.is_empty() && b.iter().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'e' | b'E')) {
            return Err("is a number, not a date-time".into());
        }
        return Err("is not a date-time".into());
    }
    match byte(10) {
        None => return Err("is a date without a time of day".into()),
        Some(b'T' | b't') => {}
        Some(b' ') => return Err("separates the date and the time with a space instead of 'T'".into()),
        Some(_) => return Err("is not a date-time (the date must be followed by 'T' and the time)".into()),
    }
    let time_ok =
        digits(11, 13) && byte(13) == Some(b':') && digits(14, 16) && byte(16) == Some(b':') && digits(17, 19);
    if !time_ok {
        return Err("does not have a time of day as HH:MM:SS".into());
    }
    let mut i = 19;
    if byte(i) == Some(b'.') {
        let start = i + 1;
        i = start;
        while byte(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        if i == start {
            return Err("has a '.' without fractional seconds".into());
        }
    }
    let offset_ok = match b.get(i..) {
        Some([]) | None => return Err("has no timezone offset or Z".into()),
        Some([b'Z' | b'z']) => true,
        Some([b'+' | b'-', h1, h2, b':', m1, m2]) => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        Some(_) => false,
    };
    if !offset_ok {
        return Err("does not end with a timezone offset as Z or +HH:MM".into());
    }
    DateTime::parse_from_rfc3339(s).map_err(|e| format!("is not a valid date-time ({e})"))
}

const DEFAULT_SCHEMA_URL: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json";

fn absolute_uri(obj: &Map<String, Value>, name: &str, errors: &mut Issues) -> Option<String> {
    let ptr = key("", name);
    let s = match obj.get(name) {
        None | Some(Value::Null) => {
            errors.push(&ptr, format!("missing required property \"{name}\" (an absolute URI)"));
            return None;
        }
        Some(Value::String(s)) => s,
        Some(other) => {
            errors.push(&ptr, format!("\"{name}\" must be an absolute URI string; found {}", type_name(other)));
            return None;
        }
    };
    match check_absolute_uri(s) {
        Ok(()) => Some(s.clone()),
        Err(why) => {
            errors.push(&ptr, format!("\"{name}\" {} is not an absolute URI: {why}", preview(s)));
            None
        }
    }
}

/// An absolute URI (RFC 3986 section 4.3): a scheme (a letter, then letters, digits, `+`, `-`,
/// `.`), a colon, and the rest without whitespace or the characters URIs never hold raw; the
/// `url` crate then checks the structure (hosts of `http:` URIs and the like).
fn check_absolute_uri(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if let Some(c) = s.chars().find(|c| c.is_whitespace() || c.is_control() || "\"<>\\^`{|}".contains(*c)) {
        return Err(format!("it contains {c:?}, which a URI cannot hold unescaped"));
    }
    let Some((scheme, _)) = s.split_once(':') else {
        return Err("it has no scheme (such as https:)".into());
    };
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err("it has no scheme (such as https:)".into());
    }
    url::Url::parse(s).map(|_| ()).map_err(|e| e.to_string())
}

fn run_state(v: Option<&Value>, errors: &mut Issues) -> Option<RunState> {
    const ALLOWED: &str = "START, RUNNING, COMPLETE, ABORT, FAIL or OTHER";
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            let state = RunState::parse(s);
            if state.is_none() {
                errors.push("/eventType", format!("\"eventType\" {} is not one of {ALLOWED} (upper case)", preview(s)));
            }
            state
        }
        Some(other) => {
            errors.push(
                "/eventType",
                format!("\"eventType\" must be a string, one of {ALLOWED}; found {}", type_name(other)),
            );
            None
        }
    }
}

fn required_object<'a>(
    obj: &'a Map<String, Value>,
    name: &str,
    ptr: &str,
    errors: &mut Issues,
) -> Option<&'a Map<String, Value>> {
    errors.note(property(obj, name, false, Value::as_object), ptr, name, |fault| match fault {
        Fault::Missing | Fault::Blank => format!("missing required property \"{name}\""),
        Fault::Wrong(other) => format!("\"{name}\" must be an object; found {}", type_name(other)),
    })
}

/// Like [`required_object`], but absent or `null` is no error.
fn optional_object<'a>(
    obj: &'a Map<String, Value>,
    name: &str,
    ptr: &str,
    errors: &mut Issues,
) -> Option<&'a Map<String, Value>> {
    match obj.get(name) {
        None | Some(Value::Null) => None,
        Some(_) => required_object(obj, name, ptr, errors),
    }
}

fn required_string(obj: &Map<String, Value>, name: &str, ptr: &str, errors: &mut Issues) -> Option<String> {
    let read = nonblank(obj, name, false);
    let s = errors.note(read, ptr, name, |fault| match fault {
        Fault::Missing => format!("missing required property \"{name}\""),
        Fault::Blank => format!("\"{name}\" must not be empty"),
        Fault::Wrong(other) => format!("\"{name}\" must be a string; found {}", type_name(other)),
    });
    s.map(str::to_string)
}

fn dataset_list(
    obj: &Map<String, Value>,
    name: &str,
    errors: &mut Issues,
    warnings: &mut Issues,
    limits: &Limits,
) -> Vec<Dataset> {
    let ptr = key("", name);
    match obj.get(name) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| read_dataset(v, &index(&ptr, i), errors, warnings, limits))
            .collect(),
        Some(other) => {
            errors.push(&ptr, format!("\"{name}\" must be an array of datasets; found {}", type_name(other)));
            Vec::new()
        }
    }
}

fn read_dataset(v: &Value, ptr: &str, errors: &mut Issues, warnings: &mut Issues, limits: &Limits) -> Option<Dataset> {
    let Value::Object(obj) = v else {
        errors.push(ptr, format!("a dataset must be an object; found {}", type_name(v)));
        return None;
    };
    let namespace = required_string(obj, "namespace", ptr, errors);
    let name = required_string(obj, "name", ptr, errors);
    let dataset_facets = optional_object(obj, "facets", ptr, errors);
    let mut dataset = Dataset { namespace: namespace?, name: name?, ..Dataset::default() };
    if let Some(f) = dataset_facets {
        facets::dataset_facets(f, &key(ptr, "facets"), &mut dataset, warnings, limits);
    }
    Some(dataset)
}
