//! The large lists of `lineageGraph`, `impact` and `piiFlow` are answered without async-graphql's
//! per-field resolvers when their items hold what the selection asks (`api::schema::plain`).
//! Each query here is asked twice, with its selection as written and with the same selection
//! inside an inline fragment (which always goes through the resolvers): the answers must agree
//! on every field either way can answer, the optional ones set and unset.

use serde_json::{json, Value};
use tributary::domain::End;

use crate::both_stores;
use crate::catalog::openlineage_edge;
use crate::common::TestApp;

both_stores!(
    plain_lists_answer_what_the_resolvers_answer,
    pii_flow_reads_only_names_when_only_names_are_asked,
    impact_reads_only_names_when_only_names_are_asked
);

const CONTAINER: &str =
    "__typename id name displayName containerType tableType database schema datastoreId purpose activeAnomalyCount";
const FIELD: &str =
    "__typename id name displayName type status latestProfileId isComputedField activeAnomalyCount containerId";
const EDGE: &str = "__typename id created sourceContainerId sourceFieldId targetContainerId targetFieldId sourceExternalFqn targetExternalFqn sourceNodeId targetNodeId description sourceType operation derived transformations lastAssertedAt retiredAt intervals { from to }";

/// A query built from its selections, each wrapped by the function given.
type Template<'a> = &'a dyn Fn(&dyn Fn(&str, &str) -> String) -> String;

async fn plain_lists_answer_what_the_resolvers_answer(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, af) = app.container(ds, "a", &["email", "name"]).await;
    let (b, bf) = app.container(ds, "b", &["email"]).await;
    let (c, cf) = app.container(ds, "c", &["email"]).await;
    // Optional attributes set on one container, left unset on the others.
    let d = app
        .ok(
            "mutation($i: ContainerInput!) { upsertContainer(input: $i) { id } }",
            json!({"i": {"datastoreId": ds, "name": "d", "database": "db", "schema": "s", "tableType": "VIEW",
                         "displayName": "D", "purpose": "reporting", "activeAnomalyCount": 3}}),
        )
        .await["upsertContainer"]["id"]
        .as_i64()
        .expect("id");
    app.edge(a, b).await;
    app.edge(b, c).await;
    app.ok(
        "mutation($s: Int, $t: Int) { createEdge(input: {sourceContainerId: $s, targetContainerId: $t, description: \"why\"}) { id } }",
        json!({"s": c, "t": d}),
    )
    .await;
    openlineage_edge(&app, End::External { fqn: "RAW.ORDERS".into() }, End::Container { id: a }).await;
    app.field_edge(af[0], bf[0]).await;
    app.field_edge(bf[0], cf[0]).await;
    app.field_edge(af[1], cf[0]).await;

    let node = format!(
        "{CONTAINER_NODE} datastore {{ __typename id name type storeType namespaces enrichmentOnly }} container {{ {CONTAINER} }}",
        CONTAINER_NODE = "__typename nodeType id name displayName containerType tableType purpose activeAnomalyCount fieldCount isTarget hasUpstream hasDownstream",
    );
    // With `fragments`, every list item's selection sits in an inline fragment on its type.
    let ask = |fragments: bool, template: Template| {
        let wrap = move |sel: &str, on: &str| match fragments {
            true => format!("... on {on} {{ {sel} }}"),
            false => sel.to_string(),
        };
        template(&wrap)
    };
    let graph = |w: &dyn Fn(&str, &str) -> String| {
        format!(
            "query($c: Int!, $d: Int) {{ lineageGraph(containerId: $c, depth: $d) {{ nodes {{ {} }} edges {{ {} }} externalNodes {{ {} }} externalEdges {{ {} }} }} }}",
            w(&node, "GraphNode"),
            w(EDGE, "LineageEdge"),
            w("__typename nodeType id fqn sourceType isTarget", "ExternalNode"),
            w(EDGE, "LineageEdge"),
        )
    };
    let impact = |w: &dyn Fn(&str, &str) -> String| {
        format!(
            "query($c: Int!) {{ impact(containerId: $c, limit: 100) {{ isPartial containers {{ {} }} }} }}",
            w(&format!("__typename distance container {{ {CONTAINER} }} via {{ {EDGE} }}"), "ImpactedContainer"),
        )
    };
    let pii = |w: &dyn Fn(&str, &str) -> String| {
        format!(
            "query($f: Int!) {{ piiFlow(fieldId: $f, limit: 100) {{ isPartial fields {{ {} }} }} }}",
            w(&format!("__typename distance derived field {{ {FIELD} }} via {{ {EDGE} }}"), "PiiField"),
        )
    };
    let cases: [(Template, Value, &str); 4] = [
        (&graph, json!({"c": b, "d": 2}), "lineageGraph"),
        (&graph, json!({"c": d, "d": 5}), "lineageGraph"),
        (&impact, json!({"c": a}), "impact"),
        (&pii, json!({"f": af[0]}), "piiFlow"),
    ];
    for (template, variables, root) in cases {
        let plain = app.ok(&ask(false, template), variables.clone()).await;
        let resolved = app.ok(&ask(true, template), variables.clone()).await;
        assert_eq!(plain, resolved, "{root} {variables}: plain and resolved answers differ");
    }
    // Not vacuous: the answers hold the items, and the optional values both set and unset.
    let around_b = app.ok(&ask(false, &graph), json!({"c": b, "d": 2})).await.to_string();
    for needle in ["\"fqn\":\"RAW.ORDERS\"", "\"sourceNodeId\":\"ext:openlineage:RAW.ORDERS\"", "\"description\":null"]
    {
        assert!(around_b.contains(needle), "{needle} in {around_b}");
    }
    let g = app.ok(&ask(false, &graph), json!({"c": d, "d": 5})).await;
    let dn = g["lineageGraph"]["nodes"].as_array().expect("nodes").iter().find(|n| n["id"] == d).cloned();
    let dn = dn.expect("d in its graph");
    assert_eq!(
        (&dn["displayName"], &dn["tableType"], &dn["activeAnomalyCount"], &dn["container"]["schema"]),
        (&json!("D"), &json!("VIEW"), &json!(3), &json!("s"))
    );
    assert_eq!(dn["datastore"]["storeType"], "jdbc");
    let i = app.ok(&ask(false, &impact), json!({"c": a})).await;
    let reached: Vec<i64> = i["impact"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| c["container"]["id"].as_i64().unwrap())
        .collect();
    assert_eq!(reached, vec![b, c, d]);
    let p = app.ok(&ask(false, &pii), json!({"f": af[0]})).await;
    let fields: Vec<(i64, &str)> = p["piiFlow"]["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| (f["field"]["id"].as_i64().unwrap(), f["field"]["type"].as_str().unwrap()))
        .collect();
    assert_eq!(fields, vec![(bf[0], "string"), (cf[0], "string")]);
}

/// Asks each query and checks the records of its items (`path`: root, list, item) against
/// `expected` on the fields a name read answers; returns the last answer's records, whole.
async fn names_agree(
    app: &TestApp,
    queries: &[String],
    vars: Value,
    path: [&str; 3],
    expected: &[Value],
) -> Vec<Value> {
    let [root, list, item] = path;
    let named = ["__typename", "id", "name", "containerId"];
    let mut records = Vec::new();
    for query in queries {
        let answer = app.ok(query, vars.clone()).await;
        records = answer[root][list].as_array().expect(list).iter().map(|i| i[item].clone()).collect();
        let names: Vec<Value> = records
            .iter()
            .map(|r| {
                let r = r.as_object().expect("a record");
                Value::Object(
                    r.iter()
                        .filter(|(k, _)| named.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(names, expected, "{query}");
    }
    records
}

/// A `piiFlow` whose items ask only a field's id, name and container reads just those; asked
/// in a fragment, with another field beside them or through the resolvers, the same fields
/// answer the same.
async fn pii_flow_reads_only_names_when_only_names_are_asked(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (_, af) = app.container(ds, "a", &["email"]).await;
    let (b, bf) = app.container(ds, "b", &["contact", "other"]).await;
    let (c, cf) = app.container(ds, "c", &["mail_copy"]).await;
    app.field_edge(af[0], bf[0]).await;
    app.field_edge(bf[0], cf[0]).await;
    let ask = |items: &str, fragments: &str| {
        format!("query($f: Int!) {{ piiFlow(fieldId: $f) {{ fields {{ {items} }} }} }} {fragments}")
    };
    let selections = [
        // Names only: the light read, answered plainly.
        ask("field { __typename id name containerId }", ""),
        // Names only, through the item's resolvers (which read the whole record).
        ask("... on PiiField { field { __typename id name containerId } }", ""),
        // Names only, in a named fragment on the field.
        ask("field { ...N }", "fragment N on Field { __typename id name containerId }"),
        // Another field beside the names, in a fragment: the whole records.
        ask("field { __typename id name containerId ...T }", "fragment T on Field { type }"),
    ];
    let expected = [
        json!({"__typename": "Field", "id": bf[0], "name": "contact", "containerId": b}),
        json!({"__typename": "Field", "id": cf[0], "name": "mail_copy", "containerId": c}),
    ];
    let records = names_agree(&app, &selections, json!({"f": af[0]}), ["piiFlow", "fields", "field"], &expected).await;
    let types: Vec<&Value> = records.iter().map(|r| &r["type"]).collect();
    assert_eq!(types, vec![&json!("string"), &json!("string")]);
}

/// `impact`'s containers as `piiFlow`'s fields above: names only, or whole records when more is
/// asked, the same either way.
async fn impact_reads_only_names_when_only_names_are_asked(app: TestApp) {
    let ds = app.datastore("wh", "snowflake").await;
    let (a, _) = app.container(ds, "a", &["x"]).await;
    let (b, _) = app.container(ds, "orders", &["x"]).await;
    let (c, _) = app.container(ds, "orders_daily", &["x"]).await;
    app.edge(a, b).await;
    app.edge(b, c).await;
    let ask = |items: &str, fragments: &str| {
        format!("query($c: Int!) {{ impact(containerId: $c) {{ containers {{ {items} }} }} }} {fragments}")
    };
    let selections = [
        ask("container { __typename id name }", ""),
        ask("... on ImpactedContainer { container { __typename id name } }", ""),
        ask("container { ...N }", "fragment N on Container { __typename id name }"),
        ask("container { __typename id name ...T }", "fragment T on Container { containerType datastore { name } }"),
    ];
    let expected = [
        json!({"__typename": "Container", "id": b, "name": "orders"}),
        json!({"__typename": "Container", "id": c, "name": "orders_daily"}),
    ];
    let records =
        names_agree(&app, &selections, json!({"c": a}), ["impact", "containers", "container"], &expected).await;
    let more: Vec<(&Value, &Value)> = records.iter().map(|r| (&r["containerType"], &r["datastore"]["name"])).collect();
    assert_eq!(more, vec![(&json!("table"), &json!("wh")), (&json!("table"), &json!("wh"))]);
}
