//! The facets Tributary applies, read from JSON into the model, leniently.
//!
//! CONTRACT "Facets applied": `columnLineage` (every shape), `symlinks`, `lifecycleStateChange`,
//! `schema`, `documentation`, `ownership`, `tags` on datasets; `sql`, `sourceCode` on jobs;
//! `parent` on runs. A facet of the wrong shape, or an entry in it that lacks what it needs, is
//! never an error: it becomes a warning (with its JSON pointer) and the rest of the event still
//! applies. Seed 000 asks for "permissive validation of the envelope and supported content", and a
//! single malformed column reference should not cost a run its table lineage.
//!
//! Column lineage is read in all three published shapes:
//! - ColumnLineageDatasetFacet 1-1-0/1-2-0: `fields.<out>.inputFields[].transformations[]` with
//!   `{type, subtype, description, masking}`;
//! - 1-0-x legacy strings: `fields.<out>.transformationType` / `transformationDescription`, which
//!   apply to every input of that output field, and 1-0-1's per-input `transformation` string;
//! - 1-2-0's dataset-wide `dataset: [...]` list of input fields.
//!
//! A facet marked `"_deleted": true` (the spec's way to say a facet was removed) is read as absent.

use serde_json::{Map, Value};

use super::issues::{nonblank, property, Fault, Issues};
use super::model::{
    ColumnEdge, Dataset, DatasetRef, InputField, JobRef, Lifecycle, LifecycleChange, Owner, ParentRef, RootRef,
    SchemaField, SourceCode, Tag, Transformation, TransformationKind,
};
use super::pointer::{index, key, preview, type_name};
use super::Limits;

/// Reads the dataset facets Tributary applies into `dataset`.
pub(super) fn dataset_facets(
    facets: &Map<String, Value>,
    ptr: &str,
    dataset: &mut Dataset,
    warnings: &mut Issues,
    limits: &Limits,
) {
    if let Some((facet, p)) = facet(facets, "symlinks", ptr, warnings) {
        dataset.symlinks = symlinks(facet, &p, warnings);
    }
    if let Some((facet, p)) = facet(facets, "schema", ptr, warnings) {
        if let Some(fields) = array(facet, "fields", &p, "schema facet", warnings) {
            let mut out = Vec::new();
            schema_fields(fields, &key(&p, "fields"), "", 1, &mut out, warnings, limits);
            dataset.schema = out;
        }
    }
    if let Some((facet, p)) = facet(facets, "documentation", ptr, warnings) {
        dataset.description = text(facet, "description", &p, warnings);
    }
    if let Some((facet, p)) = facet(facets, "ownership", ptr, warnings) {
        dataset.owners = array(facet, "owners", &p, "ownership facet", warnings).map(|owners| {
            let base = key(&p, "owners");
            owners
                .iter()
                .enumerate()
                .filter_map(|(i, o)| {
                    let p = index(&base, i);
                    let o = object(o, &p, "owner", warnings)?;
                    let name = reference(o, "name", &p, "owner", warnings)?;
                    Some(Owner { name: name.to_string(), kind: text(o, "type", &p, warnings) })
                })
                .collect()
        });
    }
    if let Some((facet, p)) = facet(facets, "tags", ptr, warnings) {
        dataset.tags =
            array(facet, "tags", &p, "tags facet", warnings).map(|tags| tag_list(tags, &key(&p, "tags"), warnings));
    }
    if let Some((facet, p)) = facet(facets, "lifecycleStateChange", ptr, warnings) {
        dataset.lifecycle = lifecycle(facet, &p, warnings);
    }
    if let Some((facet, p)) = facet(facets, "columnLineage", ptr, warnings) {
        column_lineage(facet, &p, dataset, warnings);
    }
}

/// The `parent` run facet, if present and whole.
pub(super) fn parent_facet(facets: &Map<String, Value>, ptr: &str, warnings: &mut Issues) -> Option<ParentRef> {
    let (facet, p) = facet(facets, "parent", ptr, warnings)?;
    let (run_id, job) = run_and_job(facet, &p, "parent", warnings)?;
    let root = match facet.get("root") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let rp = key(&p, "root");
            object(v, &rp, "root", warnings)
                .and_then(|root| run_and_job(root, &rp, "root", warnings))
                .map(|(run_id, job)| RootRef { run_id, job })
        }
    };
    Some(ParentRef { run_id, job, root })
}

/// The `sql` and `sourceCode` job facets.
pub(super) fn job_facets(
    facets: &Map<String, Value>,
    ptr: &str,
    warnings: &mut Issues,
) -> (Option<String>, Option<SourceCode>) {
    let sql = facet(facets, "sql", ptr, warnings).and_then(|(f, p)| {
        let query = reference(f, "query", &p, "sql facet", warnings)?;
        Some(query.to_string())
    });
    let source = facet(facets, "sourceCode", ptr, warnings).and_then(|(f, p)| {
        let code = reference(f, "sourceCode", &p, "sourceCode facet", warnings)?;
        Some(SourceCode { language: text(f, "language", &p, warnings), code: code.to_string() })
    });
    (sql, source)
}

/// A facet by name: `None` when absent, null or `_deleted`; a warning when not an object.
pub(super) fn facet<'a>(
    facets: &'a Map<String, Value>,
    name: &str,
    ptr: &str,
    warnings: &mut Issues,
) -> Option<(&'a Map<String, Value>, String)> {
    let p = key(ptr, name);
    match facets.get(name)? {
        Value::Null => None,
        Value::Object(f) if f.get("_deleted") == Some(&Value::Bool(true)) => None,
        Value::Object(f) => Some((f, p)),
        other => {
            warnings
                .push(&p, format!("the {name} facet must be an object; found {}; it is not applied", type_name(other)));
            None
        }
    }
}

pub(super) fn object<'a>(v: &'a Value, ptr: &str, what: &str, warnings: &mut Issues) -> Option<&'a Map<String, Value>> {
    match v {
        Value::Object(o) => Some(o),
        other => {
            warnings.push(ptr, format!("a {what} must be an object; found {}; it is not applied", type_name(other)));
            None
        }
    }
}

/// An array property; absent or null is `None` (with a warning, since the facets that use this
/// require it), another type is `None` with a warning.
pub(super) fn array<'a>(
    obj: &'a Map<String, Value>,
    name: &str,
    ptr: &str,
    what: &str,
    warnings: &mut Issues,
) -> Option<&'a Vec<Value>> {
    warnings.note(property(obj, name, true, Value::as_array), ptr, name, |fault| match fault {
        Fault::Missing | Fault::Blank => format!("the {what} has no \"{name}\" array; it is not applied"),
        Fault::Wrong(other) => {
            format!("\"{name}\" must be an array; found {}; the {what} is not applied", type_name(other))
        }
    })
}

/// A string that names something (a dataset, a field, an owner): required and non-empty.
pub(super) fn reference<'a>(
    obj: &'a Map<String, Value>,
    name: &str,
    ptr: &str,
    what: &str,
    warnings: &mut Issues,
) -> Option<&'a str> {
    warnings.note(nonblank(obj, name, true), ptr, name, |fault| match fault {
        Fault::Missing => format!("the {what} has no \"{name}\"; it is not applied"),
        Fault::Blank => format!("\"{name}\" is empty; the {what} is not applied"),
        Fault::Wrong(other) => {
            format!("\"{name}\" must be a string; found {}; the {what} is not applied", type_name(other))
        }
    })
}

/// An optional string property; another type is ignored with a warning.
pub(super) fn text(obj: &Map<String, Value>, name: &str, ptr: &str, warnings: &mut Issues) -> Option<String> {
    match obj.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => {
            warnings.push(
                &key(ptr, name),
                format!("\"{name}\" must be a string; found {}; it is ignored", type_name(other)),
            );
            None
        }
    }
}

/// Like [`text`], an empty string read as absent (Spark sends `"description": ""`).
pub(super) fn nonempty_text(obj: &Map<String, Value>, name: &str, ptr: &str, warnings: &mut Issues) -> Option<String> {
    text(obj, name, ptr, warnings).filter(|s| !s.is_empty())
}

fn run_and_job(obj: &Map<String, Value>, ptr: &str, what: &str, warnings: &mut Issues) -> Option<(String, JobRef)> {
    let run_p = key(ptr, "run");
    let job_p = key(ptr, "job");
    let run = match obj.get("run") {
        Some(v) => object(v, &run_p, &format!("{what} run"), warnings),
        None => {
            warnings.push(&run_p, format!("the {what} facet has no \"run\"; it is not applied"));
            None
        }
    };
    let job = match obj.get("job") {
        Some(v) => object(v, &job_p, &format!("{what} job"), warnings),
        None => {
            warnings.push(&job_p, format!("the {what} facet has no \"job\"; it is not applied"));
            None
        }
    };
    let what_facet = format!("{what} facet");
    let run_id = run.and_then(|r| reference(r, "runId", &run_p, &what_facet, warnings));
    let (namespace, name) = match job {
        Some(j) => (
            reference(j, "namespace", &job_p, &what_facet, warnings),
            reference(j, "name", &job_p, &what_facet, warnings),
        ),
        None => (None, None),
    };
    Some((run_id?.to_string(), JobRef { namespace: namespace?.to_string(), name: name?.to_string() }))
}

fn symlinks(facet: &Map<String, Value>, ptr: &str, warnings: &mut Issues) -> Vec<DatasetRef> {
    let Some(identifiers) = array(facet, "identifiers", ptr, "symlinks facet", warnings) else {
        return Vec::new();
    };
    let base = key(ptr, "identifiers");
    identifiers
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let p = index(&base, i);
            let o = object(v, &p, "symlink", warnings)?;
            let namespace = reference(o, "namespace", &p, "symlink", warnings);
            let name = reference(o, "name", &p, "symlink", warnings);
            Some(DatasetRef {
                namespace: namespace?.to_string(),
                name: name?.to_string(),
                kind: text(o, "type", &p, warnings),
            })
        })
        .collect()
}

/// Flattens SchemaDatasetFacet fields (nested `fields` of struct columns become `parent.child`,
/// listed after their parent). Nesting is bounded by `max_nesting` so JSON that did not come
/// through the body scan cannot recurse without limit.
fn schema_fields(
    fields: &[Value],
    ptr: &str,
    prefix: &str,
    level: usize,
    out: &mut Vec<SchemaField>,
    warnings: &mut Issues,
    limits: &Limits,
) {
    if level > limits.max_nesting {
        warnings.push(
            ptr,
            format!("schema fields nest deeper than {} levels; the deeper ones are ignored", limits.max_nesting),
        );
        return;
    }
    for (i, v) in fields.iter().enumerate() {
        let p = index(ptr, i);
        let Some(o) = object(v, &p, "schema field", warnings) else { continue };
        let Some(name) = reference(o, "name", &p, "schema field", warnings) else { continue };
        let full = if prefix.is_empty() { name.to_string() } else { format!("{prefix}.{name}") };
        out.push(SchemaField {
            name: full.clone(),
            data_type: text(o, "type", &p, warnings),
            description: text(o, "description", &p, warnings),
        });
        match o.get("fields") {
            None | Some(Value::Null) => {}
            Some(Value::Array(children)) => {
                schema_fields(children, &key(&p, "fields"), &full, level + 1, out, warnings, limits)
            }
            Some(other) => warnings.push(
                &key(&p, "fields"),
                format!("nested \"fields\" must be an array; found {}; they are ignored", type_name(other)),
            ),
        }
    }
}

fn tag_list(tags: &[Value], ptr: &str, warnings: &mut Issues) -> Vec<Tag> {
    tags.iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let p = index(ptr, i);
            let o = object(v, &p, "tag", warnings)?;
            let tag_key = reference(o, "key", &p, "tag", warnings)?;
            // The spec says string; a producer sending `"value": true` means "true".
            let value = match o.get("value") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                None | Some(Value::Null) => {
                    warnings.push(&key(&p, "value"), "the tag has no \"value\"; it is not applied");
                    return None;
                }
                Some(other) => {
                    warnings.push(
                        &key(&p, "value"),
                        format!("\"value\" must be a string; found {}; the tag is not applied", type_name(other)),
                    );
                    return None;
                }
            };
            Some(Tag {
                key: tag_key.to_string(),
                value,
                source: text(o, "source", &p, warnings),
                field: text(o, "field", &p, warnings),
            })
        })
        .collect()
}

fn lifecycle(facet: &Map<String, Value>, ptr: &str, warnings: &mut Issues) -> Option<Lifecycle> {
    let change_s = reference(facet, "lifecycleStateChange", ptr, "lifecycleStateChange facet", warnings)?;
    let Some(change) = LifecycleChange::parse(change_s) else {
        warnings.push(
            &key(ptr, "lifecycleStateChange"),
            format!(
                "{} is not a lifecycle state change (ALTER, CREATE, DROP, OVERWRITE, RENAME, TRUNCATE); the facet is not applied",
                preview(change_s)
            ),
        );
        return None;
    };
    let previous = match facet.get("previousIdentifier") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let p = key(ptr, "previousIdentifier");
            object(v, &p, "previousIdentifier", warnings).and_then(|o| {
                let namespace = reference(o, "namespace", &p, "previousIdentifier", warnings);
                let name = reference(o, "name", &p, "previousIdentifier", warnings);
                Some(DatasetRef { namespace: namespace?.to_string(), name: name?.to_string(), kind: None })
            })
        }
    };
    if change == LifecycleChange::Rename && previous.is_none() {
        warnings.push(ptr, "a RENAME without a previousIdentifier: the old name is unknown, so no lineage moves");
    }
    Some(Lifecycle { change, previous })
}

fn column_lineage(facet: &Map<String, Value>, ptr: &str, dataset: &mut Dataset, warnings: &mut Issues) {
    let fields_p = key(ptr, "fields");
    match facet.get("fields") {
        None | Some(Value::Null) => {
            if facet.get("dataset").is_none() {
                warnings.push(&fields_p, "the columnLineage facet has no \"fields\"; it is not applied");
            }
        }
        Some(Value::Object(fields)) => {
            for (output_field, spec) in fields {
                let p = key(&fields_p, output_field);
                if output_field.trim().is_empty() {
                    warnings.push(&p, "an output field with an empty name; its lineage is not applied");
                    continue;
                }
                let Some(spec) = object(spec, &p, "column lineage entry", warnings) else { continue };
                // 1-0-x: one transformation described for all inputs of this output field.
                let legacy = legacy_transformation(
                    nonempty_text(spec, "transformationType", &p, warnings).as_deref(),
                    nonempty_text(spec, "transformationDescription", &p, warnings),
                );
                let inputs_p = key(&p, "inputFields");
                let inputs = match spec.get("inputFields") {
                    Some(Value::Array(items)) => items,
                    None | Some(Value::Null) => {
                        warnings
                            .push(&inputs_p, format!("output field {} has no \"inputFields\"", preview(output_field)));
                        continue;
                    }
                    Some(other) => {
                        warnings.push(
                            &inputs_p,
                            format!("\"inputFields\" must be an array; found {}; it is not applied", type_name(other)),
                        );
                        continue;
                    }
                };
                for (i, v) in inputs.iter().enumerate() {
                    let ip = index(&inputs_p, i);
                    if let Some(input) = input_field(v, &ip, legacy.as_ref(), warnings) {
                        dataset.column_lineage.push(ColumnEdge {
                            output_field: output_field.clone(),
                            input,
                            pointer: ip,
                        });
                    }
                }
            }
        }
        Some(other) => warnings.push(
            &fields_p,
            format!("\"fields\" must be an object; found {}; the per-field lineage is not applied", type_name(other)),
        ),
    }
    let dataset_p = key(ptr, "dataset");
    match facet.get("dataset") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                if let Some(input) = input_field(v, &index(&dataset_p, i), None, warnings) {
                    dataset.dataset_wide.push(input);
                }
            }
        }
        Some(other) => warnings.push(
            &dataset_p,
            format!(
                "\"dataset\" must be an array; found {}; the dataset-wide lineage is not applied",
                type_name(other)
            ),
        ),
    }
}

fn input_field(v: &Value, ptr: &str, legacy: Option<&Transformation>, warnings: &mut Issues) -> Option<InputField> {
    let o = object(v, ptr, "column lineage input field", warnings)?;
    let what = "column lineage input field";
    let namespace = reference(o, "namespace", ptr, what, warnings);
    let name = reference(o, "name", ptr, what, warnings);
    let field = reference(o, "field", ptr, what, warnings);
    let (namespace, name, field) = (namespace?, name?, field?);
    // An empty list says nothing: the stock openlineage-python client writes `"transformations":
    // []` next to the older per-field strings it was given.
    let transformations = match o.get("transformations").filter(|t| !t.as_array().is_some_and(Vec::is_empty)) {
        Some(Value::Array(items)) => {
            let base = key(ptr, "transformations");
            items.iter().enumerate().filter_map(|(i, t)| transformation(t, &index(&base, i), warnings)).collect()
        }
        None | Some(Value::Null) => {
            // 1-0-1 allowed a free-text `transformation` per input; else the output field's legacy strings.
            match nonempty_text(o, "transformation", ptr, warnings) {
                Some(description) => vec![Transformation {
                    kind: TransformationKind::Direct,
                    subtype: None,
                    description: Some(description),
                    masking: false,
                }],
                None => legacy.cloned().into_iter().collect(),
            }
        }
        Some(other) => {
            warnings.push(
                &key(ptr, "transformations"),
                format!("\"transformations\" must be an array; found {}; they are ignored", type_name(other)),
            );
            Vec::new()
        }
    };
    Some(InputField {
        namespace: namespace.to_string(),
        name: name.to_string(),
        field: field.to_string(),
        transformations,
    })
}

fn transformation(v: &Value, ptr: &str, warnings: &mut Issues) -> Option<Transformation> {
    let o = object(v, ptr, "transformation", warnings)?;
    let kind = TransformationKind::parse(reference(o, "type", ptr, "transformation", warnings)?);
    let masking = match o.get("masking") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            warnings.push(
                &key(ptr, "masking"),
                format!("\"masking\" must be a boolean; found {}; read as false", type_name(other)),
            );
            false
        }
    };
    Some(Transformation {
        kind,
        subtype: nonempty_text(o, "subtype", ptr, warnings),
        description: nonempty_text(o, "description", ptr, warnings),
        masking,
    })
}

/// ColumnLineageDatasetFacet 1-0-x's `transformationType` / `transformationDescription`, as one
/// 1-2-0 transformation: `IDENTITY` is DIRECT/IDENTITY, `TRANSFORMATION` DIRECT/TRANSFORMATION,
/// `MASKED` (the 1-0-0 docs' other value) DIRECT/MASKED with `masking`, anything else DIRECT with
/// the type kept as its subtype. A description alone is a DIRECT transformation of unknown
/// subtype.
fn legacy_transformation(kind: Option<&str>, description: Option<String>) -> Option<Transformation> {
    if kind.is_none() && description.is_none() {
        return None;
    }
    let subtype = kind.map(|k| match k.to_ascii_uppercase().as_str() {
        known @ ("IDENTITY" | "TRANSFORMATION" | "MASKED") => known.to_string(),
        _ => k.to_string(),
    });
    let masking = subtype.as_deref() == Some("MASKED");
    Some(Transformation { kind: TransformationKind::Direct, subtype, description, masking })
}
