//! The graph the load reads and writes: a datastore of its own per run (so runs never meet),
//! `tables` containers with a few fields, a chain of lineage between them sent as OpenLineage
//! events; then the check at the end that every acknowledged event is stored, applied and in the
//! graph.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{anyhow, Context as _};
use serde_json::{json, Value};

use crate::api::{Api, Outcome};

/// Aliases per seeding mutation: under the service's cap of 50.
const PER_MUTATION: usize = 40;
/// Fields per table; `c0` carries column lineage (what `piiFlow` walks).
const FIELDS: [&str; 3] = ["c0", "c1", "c2"];

pub(crate) struct Seeded {
    /// The datasets' namespace, listed by the run's datastore.
    pub(crate) namespace: String,
    /// The jobs' namespace: the stored events of this run are the events of this namespace.
    pub(crate) job_namespace: String,
    /// Container id and the id of its field `c0`, by table number.
    pub(crate) tables: Vec<(i64, i64)>,
}

impl Seeded {
    /// A COMPLETE run event writing table `to` from table `from`, field `c0` from field `c0`.
    pub(crate) fn event(&self, from: usize, to: usize) -> Value {
        let input = format!("db.s.t{from}");
        json!({
            "eventType": "COMPLETE",
            "eventTime": chrono::Utc::now().to_rfc3339(),
            "producer": "https://github.com/tributary/tributary-load",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": { "runId": uuid::Uuid::new_v4().to_string() },
            "job": { "namespace": self.job_namespace, "name": format!("job_{from}_{to}") },
            "inputs": [{ "namespace": self.namespace, "name": input }],
            "outputs": [{
                "namespace": self.namespace,
                "name": format!("db.s.t{to}"),
                "facets": { "columnLineage": {
                    "_producer": "https://github.com/tributary/tributary-load",
                    "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
                    "fields": { "c0": { "inputFields": [{ "namespace": self.namespace, "name": input, "field": "c0" }] } }
                }}
            }],
        })
    }
}

/// Creates the run's datastore and tables and sends the chain `t0 → t1 → …` in batches of
/// `batch`. Returns the graph and the chain's table pairs (acknowledged and applied; anything
/// else fails the seeding).
pub(crate) async fn seed(
    api: &Api,
    run: &str,
    tables: usize,
    batch: usize,
) -> anyhow::Result<(Seeded, BTreeSet<(usize, usize)>)> {
    let namespace = format!("postgres://load-{run}");
    let d = api
        .gql(
            "mutation($n: String!, $ns: String!) { upsertDatastore(input: {name: $n, type: \"postgres\", namespaces: [$ns]}) { id } }",
            json!({ "n": format!("load-{run}"), "ns": namespace }),
        )
        .await
        .context("cannot create the load's datastore (is the token an admin's?)")?;
    let datastore = d["upsertDatastore"]["id"].as_i64().ok_or_else(|| anyhow!("no datastore id in {d}"))?;
    let fields = FIELDS.iter().map(|f| format!("{{name: \"{f}\", type: \"int\"}}")).collect::<Vec<_>>().join(", ");
    let mut ids = Vec::with_capacity(tables);
    for start in (0..tables).step_by(PER_MUTATION) {
        let end = (start + PER_MUTATION).min(tables);
        let body: String = (start..end)
            .map(|i| {
                format!(
                    "t{i}: upsertContainer(input: {{datastoreId: {datastore}, name: \"t{i}\", database: \"db\", schema: \"s\", fields: [{fields}]}}) {{ id fields(name: \"c0\") {{ items {{ id name }} }} }}\n"
                )
            })
            .collect();
        let data = api.gql(&format!("mutation {{ {body} }}"), json!({})).await.context("cannot create the tables")?;
        for i in start..end {
            let c = &data[format!("t{i}")];
            let field = c["fields"]["items"]
                .as_array()
                .and_then(|items| items.iter().find(|f| f["name"] == "c0"))
                .and_then(|f| f["id"].as_i64());
            match (c["id"].as_i64(), field) {
                (Some(id), Some(field)) => ids.push((id, field)),
                _ => return Err(anyhow!("table t{i} came back without its id or field c0: {c}")),
            }
        }
    }
    let seeded = Seeded { namespace, job_namespace: format!("load-{run}"), tables: ids };
    let pairs: Vec<(usize, usize)> = (1..tables).map(|i| (i - 1, i)).collect();
    for chunk in pairs.chunks(batch.max(1)) {
        let events: Vec<Value> = chunk.iter().map(|(a, b)| seeded.event(*a, *b)).collect();
        let (outcome, statuses, err) = api.ingest(&events).await;
        if outcome != Outcome::Ok || statuses.len() != events.len() || statuses.iter().any(|s| s != "applied") {
            return Err(anyhow!("seeding the chain failed: {outcome:?} {statuses:?} {err}"));
        }
    }
    Ok((seeded, pairs.into_iter().collect()))
}

/// What the store holds of the run after the load.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Verification {
    /// Stored events of the run's job namespace.
    pub(crate) stored: u64,
    /// Of them, applied.
    pub(crate) applied: u64,
    /// Table pairs an acknowledged event asserted that have no live container edge.
    pub(crate) edges_missing: usize,
}

pub(crate) async fn verify(
    api: &Api,
    seeded: &Seeded,
    pairs: &BTreeSet<(usize, usize)>,
) -> anyhow::Result<Verification> {
    let count = |status: Option<&str>| {
        let vars = json!({ "ns": seeded.job_namespace, "s": status });
        async move {
            let d = api
                .gql("query($ns: String!, $s: String) { openLineageEvents(jobNamespace: $ns, status: $s, size: 1) { total } }", vars)
                .await?;
            d["openLineageEvents"]["total"].as_u64().ok_or_else(|| anyhow!("no total in {d}"))
        }
    };
    let stored = count(None).await?;
    let applied = count(Some("applied")).await?;
    let mut by_source: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (a, b) in pairs {
        by_source.entry(*a).or_default().push(*b);
    }
    let mut edges_missing = 0;
    for (a, targets) in by_source {
        let d = api
            .gql(
                "query($c: Int!) { edges(containerId: $c, size: 1000) { items { sourceContainerId targetContainerId sourceFieldId } } }",
                json!({ "c": seeded.tables[a].0 }),
            )
            .await?;
        let live: BTreeSet<(i64, i64)> = d["edges"]["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["sourceFieldId"].is_null())
            .filter_map(|e| Some((e["sourceContainerId"].as_i64()?, e["targetContainerId"].as_i64()?)))
            .collect();
        edges_missing += targets.iter().filter(|b| !live.contains(&(seeded.tables[a].0, seeded.tables[**b].0))).count();
    }
    Ok(Verification { stored, applied, edges_missing })
}
