//! The facets Tributary applies, column lineage in every shape, and the warnings malformed
//! content becomes instead of an error.

use serde_json::{json, Value};

use super::super::{
    derived, indirect_only, masking, DatasetRef, LifecycleChange, Owner, SchemaField, Tag, Transformation,
    TransformationKind, ValidationIssue, MAX_ISSUES,
};
use super::{ok, run_event, set};

fn issue(pointer: &str, message: &str) -> ValidationIssue {
    ValidationIssue::new(pointer, message)
}

fn with_output_facets(facets: Value) -> Value {
    let mut e = run_event();
    set(&mut e, "/outputs/0/facets", facets);
    e
}

fn t(kind: TransformationKind, subtype: Option<&str>, masking: bool) -> Transformation {
    Transformation { kind, subtype: subtype.map(str::to_string), description: None, masking }
}

const P: &str = "/outputs/0/facets";

#[test]
fn symlinks_are_other_names_of_the_dataset() {
    let e = ok(&with_output_facets(json!({
        "symlinks": {"identifiers": [
            {"namespace": "hive://metastore", "name": "default.tbl1", "type": "TABLE"},
            {"namespace": "file", "type": "TABLE"},
            {"namespace": "s3://b", "name": "p"}
        ]}
    })));
    assert_eq!(
        e.outputs[0].symlinks,
        vec![
            DatasetRef {
                namespace: "hive://metastore".into(),
                name: "default.tbl1".into(),
                kind: Some("TABLE".into())
            },
            DatasetRef { namespace: "s3://b".into(), name: "p".into(), kind: None },
        ]
    );
    assert_eq!(
        e.warnings,
        vec![issue(&format!("{P}/symlinks/identifiers/1/name"), "the symlink has no \"name\"; it is not applied")]
    );
}

#[test]
fn schema_fields_are_flattened() {
    let e = ok(&with_output_facets(json!({
        "schema": {"fields": [
            {"name": "id", "type": "BIGINT", "description": "the key"},
            {"name": "address", "type": "STRUCT", "fields": [
                {"name": "city", "type": "STRING"},
                {"name": "geo", "type": "STRUCT", "fields": [{"name": "lat", "type": "DOUBLE"}]}
            ]},
            {"type": "INT"},
            {"name": "tags", "fields": []}
        ]}
    })));
    let field = |name: &str, ty: Option<&str>, d: Option<&str>| SchemaField {
        name: name.into(),
        data_type: ty.map(Into::into),
        description: d.map(Into::into),
    };
    assert_eq!(
        e.outputs[0].schema,
        vec![
            field("id", Some("BIGINT"), Some("the key")),
            field("address", Some("STRUCT"), None),
            field("address.city", Some("STRING"), None),
            field("address.geo", Some("STRUCT"), None),
            field("address.geo.lat", Some("DOUBLE"), None),
            field("tags", None, None),
        ]
    );
    assert_eq!(
        e.warnings,
        vec![issue(&format!("{P}/schema/fields/2/name"), "the schema field has no \"name\"; it is not applied")]
    );
}

#[test]
fn documentation_ownership_and_tags() {
    let e = ok(&with_output_facets(json!({
        "documentation": {"description": "One row per order", "contentType": "text/markdown"},
        "ownership": {"owners": [{"name": "team:data", "type": "MAINTAINER"}, {"name": "user:ann"}, {"type": "X"}]},
        "tags": {"tags": [
            {"key": "pii", "value": "true", "source": "USER", "field": "email"},
            {"key": "tier", "value": 1},
            {"key": "flag", "value": true},
            {"key": "nothing"}
        ]}
    })));
    let d = &e.outputs[0];
    assert_eq!(d.description.as_deref(), Some("One row per order"));
    assert_eq!(
        d.owners,
        Some(vec![
            Owner { name: "team:data".into(), kind: Some("MAINTAINER".into()) },
            Owner { name: "user:ann".into(), kind: None },
        ])
    );
    assert_eq!(
        d.tags,
        Some(vec![
            Tag { key: "pii".into(), value: "true".into(), source: Some("USER".into()), field: Some("email".into()) },
            Tag { key: "tier".into(), value: "1".into(), source: None, field: None },
            Tag { key: "flag".into(), value: "true".into(), source: None, field: None },
        ])
    );
    assert_eq!(
        e.warnings,
        vec![
            issue(&format!("{P}/ownership/owners/2/name"), "the owner has no \"name\"; it is not applied"),
            issue(&format!("{P}/tags/tags/3/value"), "the tag has no \"value\"; it is not applied"),
        ]
    );
    // Explicitly empty lists are kept as such; absent facets are None.
    let e = ok(&with_output_facets(json!({"ownership": {"owners": []}, "tags": {"tags": []}})));
    assert_eq!(e.outputs[0].owners, Some(vec![]));
    assert_eq!(e.outputs[0].tags, Some(vec![]));
    assert_eq!(e.inputs[0].owners, None);
    assert_eq!(e.inputs[0].tags, None);
    assert_eq!(e.inputs[0].description, None);
}

#[test]
fn lifecycle_state_changes() {
    let e = ok(&with_output_facets(json!({"lifecycleStateChange": {"lifecycleStateChange": "CREATE"}})));
    let l = e.outputs[0].lifecycle.as_ref().unwrap();
    assert_eq!((l.change, l.change.as_str(), &l.previous), (LifecycleChange::Create, "CREATE", &None));
    let e = ok(&with_output_facets(json!({"lifecycleStateChange": {
        "lifecycleStateChange": "RENAME",
        "previousIdentifier": {"namespace": "postgres://db:5432", "name": "shop.public.orders_old"}
    }})));
    let l = e.outputs[0].lifecycle.as_ref().unwrap();
    assert_eq!(l.change, LifecycleChange::Rename);
    assert_eq!(
        l.previous,
        Some(DatasetRef { namespace: "postgres://db:5432".into(), name: "shop.public.orders_old".into(), kind: None })
    );
    for s in ["ALTER", "DROP", "OVERWRITE", "TRUNCATE"] {
        let e = ok(&with_output_facets(json!({"lifecycleStateChange": {"lifecycleStateChange": s}})));
        assert_eq!(e.outputs[0].lifecycle.as_ref().unwrap().change.as_str(), s);
    }
    let e = ok(&with_output_facets(json!({"lifecycleStateChange": {"lifecycleStateChange": "RENAME"}})));
    assert_eq!(e.outputs[0].lifecycle.as_ref().unwrap().previous, None);
    assert_eq!(
        e.warnings,
        vec![issue(
            &format!("{P}/lifecycleStateChange"),
            "a RENAME without a previousIdentifier: the old name is unknown, so no lineage moves"
        )]
    );
    let e = ok(&with_output_facets(json!({"lifecycleStateChange": {"lifecycleStateChange": "READ"}})));
    assert_eq!(e.outputs[0].lifecycle, None);
    assert_eq!(
        e.warnings,
        vec![issue(
            &format!("{P}/lifecycleStateChange/lifecycleStateChange"),
            "\"READ\" is not a lifecycle state change (ALTER, CREATE, DROP, OVERWRITE, RENAME, TRUNCATE); the facet is not applied"
        )]
    );
}

#[test]
fn column_lineage_with_transformations() {
    let e = ok(&with_output_facets(json!({"columnLineage": {
        "fields": {
            "order_id": {"inputFields": [{
                "namespace": "postgres://db:5432", "name": "shop.public.raw_orders", "field": "id",
                "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "description": "", "masking": false}]
            }]},
            "email_hash": {"inputFields": [{
                "namespace": "postgres://db:5432", "name": "shop.public.raw_orders", "field": "email",
                "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION", "description": "sha256(email)", "masking": true}]
            }]}
        },
        "dataset": [{
            "namespace": "postgres://db:5432", "name": "shop.public.raw_orders", "field": "status",
            "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}]
        }]
    }})));
    let d = &e.outputs[0];
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    assert_eq!(d.column_lineage.len(), 2);
    // Object keys come back sorted (serde_json's map), so email_hash is first.
    let email = &d.column_lineage[0];
    assert_eq!(email.output_field, "email_hash");
    assert_eq!(email.pointer, format!("{P}/columnLineage/fields/email_hash/inputFields/0"));
    assert_eq!(email.input.field, "email");
    assert_eq!(
        email.input.transformations,
        vec![Transformation {
            kind: TransformationKind::Direct,
            subtype: Some("TRANSFORMATION".into()),
            description: Some("sha256(email)".into()),
            masking: true
        }]
    );
    assert!(derived(&email.input.transformations) == Some(true) && masking(&email.input.transformations));
    let id = &d.column_lineage[1];
    assert_eq!(
        (id.output_field.as_str(), id.input.name.as_str(), id.input.field.as_str()),
        ("order_id", "shop.public.raw_orders", "id")
    );
    assert_eq!(id.input.transformations, vec![t(TransformationKind::Direct, Some("IDENTITY"), false)]);
    assert_eq!(derived(&id.input.transformations), Some(false));
    assert_eq!(d.dataset_wide.len(), 1);
    assert_eq!(d.dataset_wide[0].field, "status");
    assert_eq!(d.dataset_wide[0].transformations, vec![t(TransformationKind::Indirect, Some("FILTER"), false)]);
    assert!(indirect_only(&d.dataset_wide[0].transformations));
}

#[test]
fn legacy_column_lineage_strings() {
    let e = ok(&with_output_facets(json!({"columnLineage": {"fields": {
        "a": {
            "inputFields": [{"namespace": "n", "name": "src", "field": "ia"}, {"namespace": "n", "name": "src", "field": "ib"}],
            "transformationDescription": "identical",
            "transformationType": "IDENTITY"
        },
        "b": {"inputFields": [{"namespace": "n", "name": "src", "field": "x"}], "transformationType": "TRANSFORMATION"},
        "c": {"inputFields": [{"namespace": "n", "name": "src", "field": "x"}], "transformationType": "MASKED", "transformationDescription": "md5(x)"},
        "d": {"inputFields": [{"namespace": "n", "name": "src", "field": "x"}], "transformationType": "AGGREGATION"},
        "e": {"inputFields": [{"namespace": "n", "name": "src", "field": "x"}], "transformationDescription": "x + 1"},
        "f": {"inputFields": [{"namespace": "n", "name": "src", "field": "x", "transformation": "upper(x)"}]},
        "g": {"inputFields": [{"namespace": "n", "name": "src", "field": "x"}]},
        "h": {
            "inputFields": [{"namespace": "n", "name": "src", "field": "x", "transformations": [{"type": "INDIRECT", "subtype": "JOIN"}]}],
            "transformationType": "IDENTITY"
        },
        // As the stock openlineage-python client writes the older form: an empty list beside it.
        "i": {
            "inputFields": [{"namespace": "n", "name": "src", "field": "x", "transformations": []}],
            "transformationType": "IDENTITY"
        }
    }}})));
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    let edges = &e.outputs[0].column_lineage;
    let of = |out: &str| {
        edges.iter().filter(|c| c.output_field == out).map(|c| c.input.transformations.clone()).collect::<Vec<_>>()
    };
    let identity = Transformation {
        kind: TransformationKind::Direct,
        subtype: Some("IDENTITY".into()),
        description: Some("identical".into()),
        masking: false,
    };
    assert_eq!(of("a"), vec![vec![identity.clone()], vec![identity]]);
    assert_eq!(derived(&of("a")[0]), Some(false));
    assert_eq!(of("b"), vec![vec![t(TransformationKind::Direct, Some("TRANSFORMATION"), false)]]);
    assert_eq!(derived(&of("b")[0]), Some(true));
    let masked = Transformation {
        kind: TransformationKind::Direct,
        subtype: Some("MASKED".into()),
        description: Some("md5(x)".into()),
        masking: true,
    };
    assert_eq!(of("c"), vec![vec![masked]]);
    assert_eq!(of("d"), vec![vec![t(TransformationKind::Direct, Some("AGGREGATION"), false)]]);
    let described = |d: &str| Transformation {
        kind: TransformationKind::Direct,
        subtype: None,
        description: Some(d.into()),
        masking: false,
    };
    assert_eq!(of("e"), vec![vec![described("x + 1")]]);
    assert_eq!(of("f"), vec![vec![described("upper(x)")]]);
    assert_eq!(of("g"), vec![Vec::<Transformation>::new()]);
    assert_eq!(derived(&of("g")[0]), None, "an empty list says nothing: not said");
    // A 1-2-0 list wins over the output field's legacy string.
    assert_eq!(of("h"), vec![vec![t(TransformationKind::Indirect, Some("JOIN"), false)]]);
    assert_eq!(of("i"), vec![vec![t(TransformationKind::Direct, Some("IDENTITY"), false)]]);
    assert_eq!(derived(&of("i")[0]), Some(false));
}

#[test]
fn malformed_references_are_warnings_not_errors() {
    let e = ok(&with_output_facets(json!({"columnLineage": {
        "fields": {
            "id": {"inputFields": [
                {"namespace": "n", "name": "src", "field": "a"},
                {"namespace": "n", "name": "src", "field": "b", "transformations": [{"subtype": "IDENTITY"}, {"type": "DIRECT", "masking": "yes"}]},
                {"namespace": "n", "name": "src"},
                "n.src.c",
                {"namespace": "n", "name": "", "field": "d"},
                {"namespace": "n", "name": "src", "field": "e", "transformations": "IDENTITY"}
            ]},
            "a/b~c": {"inputFields": [{"namespace": "n", "field": "x"}]},
            "no_inputs": {},
            "bad_inputs": {"inputFields": {"namespace": "n"}},
            "not_an_object": 3
        },
        "dataset": [{"namespace": "n", "name": "src", "field": "f"}, {"field": "g"}]
    }})));
    let base = format!("{P}/columnLineage");
    assert_eq!(
        e.warnings,
        vec![
            issue(
                &format!("{base}/fields/a~1b~0c/inputFields/0/name"),
                "the column lineage input field has no \"name\"; it is not applied"
            ),
            issue(
                &format!("{base}/fields/bad_inputs/inputFields"),
                "\"inputFields\" must be an array; found an object; it is not applied"
            ),
            issue(
                &format!("{base}/fields/id/inputFields/1/transformations/0/type"),
                "the transformation has no \"type\"; it is not applied"
            ),
            issue(
                &format!("{base}/fields/id/inputFields/1/transformations/1/masking"),
                "\"masking\" must be a boolean; found a string; read as false"
            ),
            issue(
                &format!("{base}/fields/id/inputFields/2/field"),
                "the column lineage input field has no \"field\"; it is not applied"
            ),
            issue(
                &format!("{base}/fields/id/inputFields/3"),
                "a column lineage input field must be an object; found a string; it is not applied"
            ),
            issue(
                &format!("{base}/fields/id/inputFields/4/name"),
                "\"name\" is empty; the column lineage input field is not applied"
            ),
            issue(
                &format!("{base}/fields/id/inputFields/5/transformations"),
                "\"transformations\" must be an array; found a string; they are ignored"
            ),
            issue(&format!("{base}/fields/no_inputs/inputFields"), "output field \"no_inputs\" has no \"inputFields\""),
            issue(
                &format!("{base}/fields/not_an_object"),
                "a column lineage entry must be an object; found a number; it is not applied"
            ),
            issue(
                &format!("{base}/dataset/1/namespace"),
                "the column lineage input field has no \"namespace\"; it is not applied"
            ),
            issue(
                &format!("{base}/dataset/1/name"),
                "the column lineage input field has no \"name\"; it is not applied"
            ),
        ]
    );
    let edges = &e.outputs[0].column_lineage;
    assert_eq!(edges.iter().map(|c| c.input.field.as_str()).collect::<Vec<_>>(), vec!["a", "b", "e"]);
    assert_eq!(edges[1].input.transformations, vec![t(TransformationKind::Direct, None, false)]);
    assert!(edges[2].input.transformations.is_empty());
    assert_eq!(e.outputs[0].dataset_wide.len(), 1);
    // The event's table lineage is untouched.
    assert_eq!(e.relationship_count(), 1 + 3 + 1);
}

#[test]
fn facets_of_the_wrong_shape_are_warnings() {
    let e = ok(&with_output_facets(json!({
        "schema": "id INT",
        "columnLineage": {"fields": []},
        "symlinks": {"identifiers": {}},
        "documentation": {"description": 5},
        "ownership": {},
        "tags": null,
        "custom": "anything goes in an unknown facet"
    })));
    assert_eq!(
        e.warnings,
        vec![
            issue(
                &format!("{P}/symlinks/identifiers"),
                "\"identifiers\" must be an array; found an object; the symlinks facet is not applied"
            ),
            issue(&format!("{P}/schema"), "the schema facet must be an object; found a string; it is not applied"),
            issue(
                &format!("{P}/documentation/description"),
                "\"description\" must be a string; found a number; it is ignored"
            ),
            issue(&format!("{P}/ownership/owners"), "the ownership facet has no \"owners\" array; it is not applied"),
            issue(
                &format!("{P}/columnLineage/fields"),
                "\"fields\" must be an object; found an array; the per-field lineage is not applied"
            ),
        ]
    );
    let d = &e.outputs[0];
    assert!(d.schema.is_empty() && d.column_lineage.is_empty() && d.symlinks.is_empty());
    assert_eq!((d.description.as_ref(), d.owners.as_ref(), d.tags.as_ref()), (None, None, None));
}

#[test]
fn deleted_facets_are_absent() {
    let e = ok(&with_output_facets(json!({
        "documentation": {"_deleted": true},
        "schema": {"_deleted": true, "fields": [{"name": "a"}]}
    })));
    assert!(e.warnings.is_empty());
    assert!(e.outputs[0].description.is_none() && e.outputs[0].schema.is_empty());
}

#[test]
fn facets_are_read_on_inputs_and_dataset_events_too() {
    let mut e = run_event();
    set(&mut e, "/inputs/0/facets", json!({"schema": {"fields": [{"name": "id", "type": "INT"}]}}));
    assert_eq!(ok(&e).inputs[0].schema.len(), 1);
    let d = json!({
        "eventTime": "2025-01-01T00:00:00Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "n", "name": "view", "facets": {
            "columnLineage": {"fields": {"v": {"inputFields": [{"namespace": "n", "name": "base", "field": "c"}]}}}
        }}
    });
    let e = ok(&d);
    assert_eq!(e.dataset.as_ref().unwrap().column_lineage.len(), 1);
    assert_eq!(
        e.dataset.as_ref().unwrap().column_lineage[0].pointer,
        "/dataset/facets/columnLineage/fields/v/inputFields/0"
    );
    assert_eq!(e.relationship_count(), 1);
}

#[test]
fn job_facets_sql_and_source_code() {
    let mut e = run_event();
    set(
        &mut e,
        "/job/facets",
        json!({
            "sql": {"query": "INSERT INTO orders SELECT * FROM raw_orders", "dialect": "postgres"},
            "sourceCode": {"language": "python", "sourceCode": "print('hi')"},
            "documentation": {"description": "job docs are kept with the event"}
        }),
    );
    let got = ok(&e);
    assert_eq!(got.job_sql.as_deref(), Some("INSERT INTO orders SELECT * FROM raw_orders"));
    let code = got.job_source_code.unwrap();
    assert_eq!((code.language.as_deref(), code.code.as_str()), (Some("python"), "print('hi')"));
    set(&mut e, "/job/facets", json!({"sql": {"dialect": "x"}, "sourceCode": {"language": "sql", "sourceCode": 1}}));
    let got = ok(&e);
    assert_eq!((got.job_sql, got.job_source_code), (None, None));
    assert_eq!(
        got.warnings,
        vec![
            issue("/job/facets/sql/query", "the sql facet has no \"query\"; it is not applied"),
            issue(
                "/job/facets/sourceCode/sourceCode",
                "\"sourceCode\" must be a string; found a number; the sourceCode facet is not applied"
            ),
        ]
    );
}

#[test]
fn the_parent_run_facet() {
    let mut e = run_event();
    set(
        &mut e,
        "/run/facets",
        json!({"parent": {
            "run": {"runId": "019127de-fd25-7707-bfa4-3ec02693a531"},
            "job": {"namespace": "airflow", "name": "dag"},
            "root": {"run": {"runId": "019127de-0000-7707-bfa4-3ec02693a531"}, "job": {"namespace": "airflow", "name": "root"}}
        }}),
    );
    let parent = ok(&e).parent.unwrap();
    assert_eq!(parent.run_id, "019127de-fd25-7707-bfa4-3ec02693a531");
    assert_eq!((parent.job.namespace.as_str(), parent.job.name.as_str()), ("airflow", "dag"));
    let root = parent.root.unwrap();
    assert_eq!((root.run_id.as_str(), root.job.name.as_str()), ("019127de-0000-7707-bfa4-3ec02693a531", "root"));

    set(&mut e, "/run/facets", json!({"parent": {"job": {"namespace": "airflow"}}}));
    let got = ok(&e);
    assert_eq!(got.parent, None);
    assert_eq!(
        got.warnings,
        vec![
            issue("/run/facets/parent/run", "the parent facet has no \"run\"; it is not applied"),
            issue("/run/facets/parent/job/name", "the parent facet has no \"name\"; it is not applied"),
        ]
    );
    // A malformed root drops only the root.
    set(
        &mut e,
        "/run/facets",
        json!({"parent": {"run": {"runId": "r"}, "job": {"namespace": "a", "name": "b"}, "root": {"run": {}}}}),
    );
    let got = ok(&e);
    assert!(got.parent.as_ref().unwrap().root.is_none());
    assert_eq!(got.warnings.len(), 2, "{:?}", got.warnings);
}

#[test]
fn warnings_are_capped() {
    let bad: Vec<Value> = (0..300).map(|_| json!({"namespace": "n", "name": "src"})).collect();
    let e = ok(&with_output_facets(json!({"columnLineage": {"fields": {"x": {"inputFields": bad}}}})));
    assert_eq!(e.warnings.len(), MAX_ISSUES + 1);
    assert_eq!(e.warnings[MAX_ISSUES], issue("", "200 more issues are not listed"));
}

#[test]
fn derived_masking_and_indirect() {
    use TransformationKind::{Direct, Indirect, Other};
    let identity = t(Direct, Some("IDENTITY"), false);
    assert_eq!(derived(std::slice::from_ref(&identity)), Some(false));
    assert_eq!(derived(&[]), None, "no information: not said either way");
    assert_eq!(derived(&[t(Direct, Some("TRANSFORMATION"), false)]), Some(true));
    assert_eq!(derived(&[t(Direct, Some("AGGREGATION"), false)]), Some(true));
    assert_eq!(derived(&[t(Direct, None, false)]), Some(true));
    assert_eq!(derived(&[t(Direct, Some("IDENTITY"), true)]), Some(true), "a masked identity is not a copy");
    assert_eq!(derived(&[identity.clone(), t(Direct, Some("TRANSFORMATION"), false)]), Some(true));
    assert_eq!(derived(&[t(Other("MAGIC".into()), Some("IDENTITY"), false)]), Some(true));
    // Spark's legacy mode lists the query's filters and joins on every copied column.
    assert_eq!(
        derived(&[identity.clone(), t(Indirect, Some("JOIN"), false), t(Indirect, Some("FILTER"), false)]),
        Some(false)
    );
    assert_eq!(derived(&[t(Indirect, Some("JOIN"), false)]), Some(true));

    assert!(!masking(&[]));
    assert!(!masking(std::slice::from_ref(&identity)));
    assert!(masking(&[identity.clone(), t(Direct, Some("TRANSFORMATION"), true)]));

    assert!(!indirect_only(&[]));
    assert!(indirect_only(&[t(Indirect, Some("SORT"), false), t(Indirect, Some("JOIN"), false)]));
    assert!(!indirect_only(&[identity, t(Indirect, Some("JOIN"), false)]));
    assert_eq!(TransformationKind::parse("INDIRECT"), Indirect);
    assert_eq!(TransformationKind::parse("direct"), Other("direct".into()));
    assert_eq!(Other("x".into()).as_str(), "x");
}
