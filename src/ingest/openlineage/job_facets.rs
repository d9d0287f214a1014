//! The facets that describe a job and a run, read for the job and run records: `jobType`,
//! `documentation`, `ownership` and `sourceCodeLocation` on jobs; `nominalTime` and
//! `errorMessage` on runs. As with the dataset facets (`facets`), a facet of the wrong shape is a
//! warning with its pointer and is not applied, never half-applied: the event still applies.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::facets::{array, facet, nonempty_text, object, reference, text};
use super::issues::Issues;
use super::model::{JobFacets, RunFacets};
use super::pointer::{index, key, type_name};

/// The `sourceCodeLocation` properties kept (strings, as the spec defines them).
const LOCATION_KEYS: [&str; 7] = ["type", "url", "repoUrl", "path", "version", "tag", "branch"];

/// Reads the job facets a job record keeps.
pub(super) fn job_facets(facets: &Map<String, Value>, ptr: &str, warnings: &mut Issues) -> JobFacets {
    let mut out = JobFacets::default();
    if let Some((f, p)) = facet(facets, "jobType", ptr, warnings) {
        out.processing_type = nonempty_text(f, "processingType", &p, warnings);
        out.integration = nonempty_text(f, "integration", &p, warnings);
        out.job_type = nonempty_text(f, "jobType", &p, warnings);
    }
    if let Some((f, p)) = facet(facets, "documentation", ptr, warnings) {
        out.description = nonempty_text(f, "description", &p, warnings);
    }
    if let Some((f, p)) = facet(facets, "ownership", ptr, warnings) {
        if let Some(owners) = array(f, "owners", &p, "ownership facet", warnings) {
            let base = key(&p, "owners");
            out.owners = owners
                .iter()
                .enumerate()
                .filter_map(|(i, o)| {
                    let p = index(&base, i);
                    let o = object(o, &p, "owner", warnings)?;
                    reference(o, "name", &p, "owner", warnings).map(str::to_string)
                })
                .collect();
        }
    }
    if let Some((f, p)) = facet(facets, "sourceCodeLocation", ptr, warnings) {
        let mut kept = Map::new();
        for k in LOCATION_KEYS {
            if let Some(v) = nonempty_text(f, k, &p, warnings) {
                kept.insert(k.to_string(), Value::String(v));
            }
        }
        if kept.is_empty() {
            warnings.push(&p, "the sourceCodeLocation facet names no location; it is not applied");
        } else {
            out.source_code_location = Some(Value::Object(kept).to_string());
        }
    }
    out
}

/// Reads the run facets a run record keeps.
pub(super) fn run_facets(facets: &Map<String, Value>, ptr: &str, warnings: &mut Issues) -> RunFacets {
    let mut out = RunFacets::default();
    if let Some((f, p)) = facet(facets, "nominalTime", ptr, warnings) {
        let start = time(f, "nominalStartTime", &p, warnings);
        let end = time(f, "nominalEndTime", &p, warnings);
        match start {
            Some(start) => {
                out.nominal_start = Some(start);
                out.nominal_end = end;
            }
            None => warnings.push(&p, "the nominalTime facet has no valid \"nominalStartTime\"; it is not applied"),
        }
    }
    if let Some((f, p)) = facet(facets, "errorMessage", ptr, warnings) {
        // Only a facet with its message applies: a language or stack trace alone says nothing.
        if let Some(message) = reference(f, "message", &p, "errorMessage facet", warnings) {
            out.error_message = Some(message.to_string());
            out.error_language = text(f, "programmingLanguage", &p, warnings);
            out.stack_trace = text(f, "stackTrace", &p, warnings);
        }
    }
    out
}

/// An RFC 3339 time property; another shape is a warning.
fn time(obj: &Map<String, Value>, name: &str, ptr: &str, warnings: &mut Issues) -> Option<DateTime<Utc>> {
    match obj.get(name)? {
        Value::Null => None,
        Value::String(s) => match DateTime::parse_from_rfc3339(s) {
            Ok(t) => Some(t.with_timezone(&Utc)),
            Err(_) => {
                warnings.push(&key(ptr, name), format!("\"{name}\" is not an RFC 3339 time; it is ignored"));
                None
            }
        },
        other => {
            warnings.push(
                &key(ptr, name),
                format!("\"{name}\" must be a string; found {}; it is ignored", type_name(other)),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_job(v: Value) -> (JobFacets, Vec<String>) {
        let mut w = Issues::default();
        let out = job_facets(v.as_object().expect("object"), "/job/facets", &mut w);
        (out, w.finish().into_iter().map(|i| i.pointer).collect())
    }

    fn read_run(v: Value) -> (RunFacets, Vec<String>) {
        let mut w = Issues::default();
        let out = run_facets(v.as_object().expect("object"), "/run/facets", &mut w);
        (out, w.finish().into_iter().map(|i| i.pointer).collect())
    }

    #[test]
    fn job_facets_are_read() {
        let (j, warnings) = read_job(json!({
            "jobType": {"processingType": "STREAMING", "integration": "FLINK", "jobType": "JOB"},
            "documentation": {"description": "moves orders"},
            "ownership": {"owners": [{"name": "team:data"}, {"type": "x"}]},
            "sourceCodeLocation": {"type": "git", "url": "https://git/x", "path": "a.py", "extra": 1}
        }));
        assert_eq!(j.processing_type.as_deref(), Some("STREAMING"));
        assert_eq!(j.integration.as_deref(), Some("FLINK"));
        assert_eq!(j.job_type.as_deref(), Some("JOB"));
        assert_eq!(j.description.as_deref(), Some("moves orders"));
        assert_eq!(j.owners, ["team:data"]);
        let loc: Value = serde_json::from_str(j.source_code_location.as_deref().unwrap_or("null")).unwrap_or_default();
        assert_eq!(loc, json!({"type": "git", "url": "https://git/x", "path": "a.py"}));
        assert_eq!(warnings, ["/job/facets/ownership/owners/1/name"]);
    }

    #[test]
    fn malformed_run_facets_are_reported_and_ignored() {
        let (r, warnings) = read_run(json!({"errorMessage": "boom", "nominalTime": {"nominalStartTime": "yesterday"}}));
        assert_eq!(r, RunFacets::default());
        assert_eq!(
            warnings,
            ["/run/facets/nominalTime/nominalStartTime", "/run/facets/nominalTime", "/run/facets/errorMessage"]
        );
        let (r, warnings) = read_run(json!({
            "errorMessage": {"message": "division by zero", "programmingLanguage": "PYTHON", "stackTrace": "tb"},
            "nominalTime": {"nominalStartTime": "2024-01-01T00:00:00Z", "nominalEndTime": "2024-01-01T01:00:00+01:00"}
        }));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(r.error_message.as_deref(), Some("division by zero"));
        assert_eq!(r.error_language.as_deref(), Some("PYTHON"));
        assert_eq!(r.nominal_end.map(|t| t.to_rfc3339()), Some("2024-01-01T00:00:00+00:00".into()));
    }
}
