//! Neo4j's own limit: hand-written Cypher for the same answers, sent directly through neo4rs.
//! Graph queries use the service's number of statements (one per level and direction, the flag
//! reads, and one per kind of node attribute) but return only the columns the answer needs, in
//! auto-commit transactions. Ingest writes what the service writes for an event (the event, the
//! id block, the edges, their evidence, the outcome) in one transaction per event, and, as #32's
//! batched baseline, the same writes of a whole request in one transaction, a statement each.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use async_trait::async_trait;
use neo4rs::{query, BoltType, Graph as Neo, Query};
use serde_json::{json, Value};
use tributary::domain::rules::{is_indirect_only, is_masking};

use crate::baseline::{BEdge, BEnd, Dir, EdgeSource, NodeProps};
use crate::gen::Graph;

pub struct NeoBase {
    graph: Neo,
    statements: AtomicU64,
    edge_rows: AtomicU64,
    externals: Vec<String>,
    external_index: HashMap<String, u32>,
    /// OpenLineage namespace → datastore id.
    namespaces: HashMap<String, i64>,
}

pub async fn connect(uri: &str, user: &str, password: &str) -> anyhow::Result<Neo> {
    let config = neo4rs::ConfigBuilder::default()
        .uri(uri)
        .user(user)
        .password(password)
        .max_connections(16)
        .fetch_size(500)
        .build()?;
    Ok(Neo::connect(config).await?)
}

fn row_i64(row: &neo4rs::Row, col: &str) -> anyhow::Result<i64> {
    row.get::<i64>(col).with_context(|| format!("column {col}"))
}

impl NeoBase {
    pub async fn new(graph: Neo, g: &Graph) -> anyhow::Result<NeoBase> {
        let base = NeoBase {
            graph,
            statements: AtomicU64::new(0),
            edge_rows: AtomicU64::new(0),
            externals: g.externals.clone(),
            external_index: g.externals.iter().enumerate().map(|(i, x)| (x.clone(), i as u32)).collect(),
            namespaces: g.datastores.iter().enumerate().map(|(i, d)| (d.namespace.clone(), i as i64 + 1)).collect(),
        };
        base.rows(query(
            "CREATE CONSTRAINT bench_event_fingerprint IF NOT EXISTS FOR (e:BenchEvent) REQUIRE e.fingerprint IS UNIQUE",
        ))
        .await?;
        base.rows(query(
            "CREATE CONSTRAINT bench_batch_event_fingerprint IF NOT EXISTS \
             FOR (e:BenchBatchEvent) REQUIRE e.fingerprint IS UNIQUE",
        ))
        .await?;
        Ok(base)
    }

    async fn rows(&self, q: Query) -> anyhow::Result<Vec<neo4rs::Row>> {
        self.statements.fetch_add(1, Ordering::Relaxed);
        let mut stream = self.graph.execute(q).await?;
        let mut out = Vec::new();
        while let Some(row) = stream.next().await? {
            out.push(row);
        }
        Ok(out)
    }

    /// The server the figures were measured on: its version and the JVM's JIT, which moves the
    /// ratios (`scripts/neo4j-start` runs C1 only for a fast start; Neo4j's own default is C2,
    /// under which the batched baseline gains more than the service: BENCHMARKS, issue #44).
    /// "unknown" where the server does not say (`dbms.queryJmx` needs an admin on some setups).
    pub async fn server(&self) -> String {
        let version = self
            .rows(query("CALL dbms.components() YIELD versions, edition RETURN versions[0] AS v, edition AS e"))
            .await
            .ok()
            .and_then(|rows| {
                let r = rows.first()?;
                Some(format!("Neo4j {} {}", r.get::<String>("v").ok()?, r.get::<String>("e").ok()?))
            })
            .unwrap_or_else(|| "Neo4j (version unknown)".into());
        let jvm = self
            .rows(query(
                "CALL dbms.queryJmx('java.lang:type=Runtime') YIELD attributes \
                 RETURN attributes.InputArguments.value AS args, attributes.VmVersion.value AS vm",
            ))
            .await
            .ok()
            .and_then(|rows| {
                let r = rows.first()?;
                let args: Vec<String> = r.get("args").ok()?;
                let vm: String = r.get("vm").ok()?;
                Some(describe_jvm(&vm, &args))
            })
            .unwrap_or_else(|| "JVM unknown".into());
        format!("{version}, {jvm}")
    }

    fn end(&self, id: Option<i64>, fqn: Option<String>) -> anyhow::Result<BEnd> {
        match (id, fqn) {
            (_, Some(fqn)) => {
                Ok(BEnd::X(*self.external_index.get(&fqn).with_context(|| format!("unknown external {fqn}"))?))
            }
            (Some(id), None) => Ok(BEnd::C(id)),
            (None, None) => anyhow::bail!("an edge end with neither id nor fqn"),
        }
    }

    /// The rows of an edge statement for `ids` (none without ids), counted as edge rows read.
    async fn edge_rows_of(&self, text: &str, ids: &[i64]) -> anyhow::Result<Vec<neo4rs::Row>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.rows(query(text).param("ids", ids.to_vec())).await?;
        self.edge_rows.fetch_add(rows.len() as u64, Ordering::Relaxed);
        Ok(rows)
    }

    /// The rows one OpenLineage event writes: the event node, its container edges and its
    /// field edges, each edge row carrying its evidence's key, time and producer. `prefix` keeps
    /// one baseline's edges apart from the other's and from the service's.
    fn event_rows(&self, event: &Value, prefix: &str, now: &str) -> EventRows {
        let fingerprint = tributary::ingest::openlineage::event_fingerprint(event);
        let producer = event["producer"].as_str().unwrap_or_default().to_string();
        let job = format!(
            "{}/{}",
            event["job"]["namespace"].as_str().unwrap_or(""),
            event["job"]["name"].as_str().unwrap_or("")
        );
        let run_id = event["run"]["runId"].as_str().unwrap_or_default().to_string();
        let at = event["eventTime"].as_str().unwrap_or_default().to_string();
        let key_of = |d: &Value| -> Option<String> {
            let ds = self.namespaces.get(d["namespace"].as_str()?)?;
            Some(format!("{ds}/{}", d["name"].as_str()?))
        };
        let inputs: Vec<String> = event["inputs"].as_array().into_iter().flatten().filter_map(key_of).collect();
        let outputs: Vec<&Value> = event["outputs"].as_array().into_iter().flatten().collect();
        let evidence_key = json!(["openlineage", "run", event["job"]["namespace"], event["job"]["name"]]).to_string();
        // What every edge row of the event carries for its evidence.
        let evidence = |mut entries: Vec<(&str, BoltType)>| {
            entries.extend([
                ("key", evidence_key.clone().into()),
                ("at", at.clone().into()),
                ("producer", producer.clone().into()),
            ]);
            map(entries)
        };
        let mut crows: Vec<BoltType> = Vec::new();
        let mut frows: Vec<BoltType> = Vec::new();
        for o in &outputs {
            let Some(t) = key_of(o) else { continue };
            for s in &inputs {
                let details = json!({"runId": run_id, "job": job, "source": s, "target": t}).to_string();
                crows.push(evidence(vec![
                    ("s", s.clone().into()),
                    ("t", t.clone().into()),
                    ("ukey", format!("{prefix}|c:{s}|c:{t}|openlineage").into()),
                    ("details", details.into()),
                ]));
            }
            let Some(fields) = o["facets"]["columnLineage"]["fields"].as_object() else { continue };
            for (out_field, spec) in fields {
                for input in spec["inputFields"].as_array().into_iter().flatten() {
                    let Some(sc) = key_of(input) else { continue };
                    let sf = input["field"].as_str().unwrap_or_default();
                    let tr = input["transformations"].clone();
                    let derived = tr.as_array().into_iter().flatten().any(|x| {
                        x["masking"].as_bool() == Some(true)
                            || (x["type"] == "DIRECT" && x["subtype"].as_str() != Some("IDENTITY"))
                    });
                    let details = json!({"runId": run_id, "job": job, "transformations": tr}).to_string();
                    frows.push(evidence(vec![
                        ("sc", sc.clone().into()),
                        ("tc", t.clone().into()),
                        ("sf", sf.to_string().into()),
                        ("tf", out_field.clone().into()),
                        ("ukey", format!("{prefix}|f:{sc}/{sf}|f:{t}/{out_field}|openlineage").into()),
                        ("tr", tr.to_string().into()),
                        ("derived", derived.into()),
                        ("details", details.into()),
                    ]));
                }
            }
        }
        let n = (crows.len() + frows.len()) as i64;
        let event = map(vec![
            ("fp", fingerprint.into()),
            (
                "row",
                map(vec![
                    ("job", job.into()),
                    ("run_id", run_id.into()),
                    ("event_type", event["eventType"].as_str().unwrap_or("OTHER").to_string().into()),
                    ("received_at", now.to_string().into()),
                    ("status", "pending".into()),
                    ("body", event.to_string().into()),
                ]),
            ),
            ("summary", json!({"edges_asserted": n}).to_string().into()),
        ]);
        EventRows { event, crows, frows }
    }

    /// Writes `events` (their rows from `event_rows`) in one transaction: the event nodes, one id
    /// block from a counter, the container edges, the field edges (each with its evidence) and
    /// the outcomes, one `UNWIND` statement each. `label` is the event nodes' label; `now` the
    /// time `event_rows` was given, the new edges' creation time.
    async fn write(&self, label: &str, now: &str, events: Vec<EventRows>) -> anyhow::Result<()> {
        let intervals = json!([{"from": now, "to": null}]).to_string();
        let (mut rows, mut crows, mut frows) = (Vec::new(), Vec::new(), Vec::new());
        for e in events {
            rows.push(e.event);
            crows.extend(e.crows);
            frows.extend(e.frows);
        }
        let n = (crows.len() + frows.len()) as i64;
        let mut txn = self.graph.start_txn().await?;
        let run = |q: Query| {
            self.statements.fetch_add(1, Ordering::Relaxed);
            q
        };
        txn.run(run(query(&format!(
            "UNWIND $rows AS ev MERGE (e:{label} {{fingerprint: ev.fp}}) ON CREATE SET e += ev.row"
        ))
        .param("rows", rows.clone())))
            .await?;
        let first: i64 = {
            let mut s = txn
                .execute(run(query(
                    "MERGE (k:Counter {name: 'bench_edge'}) ON CREATE SET k.value = 0
                     SET k.value = k.value + $n RETURN k.value - $n + 1 AS first",
                )
                .param("n", n)))
                .await?;
            let mut first = 0;
            while let Some(r) = s.next(txn.handle()).await? {
                first = row_i64(&r, "first")?;
            }
            first
        };
        // Negative ids: never one of the service's.
        let with_ids = |rows: Vec<BoltType>, offset: i64| -> Vec<BoltType> {
            rows.into_iter()
                .enumerate()
                .map(|(i, r)| match r {
                    BoltType::Map(mut m) => {
                        m.put("id".into(), (-(first + offset + i as i64)).into());
                        BoltType::Map(m)
                    }
                    other => other,
                })
                .collect()
        };
        let ncrows = crows.len() as i64;
        let params = |q: Query| q.param("now", now.to_string()).param("intervals", intervals.clone());
        if !crows.is_empty() {
            txn.run(run(params(query(
                "UNWIND $rows AS row
                 MATCH (s:Container {key: row.s}) MATCH (t:Container {key: row.t})
                 MERGE (s)-[r:LINEAGE {ukey: row.ukey}]->(t)
                 ON CREATE SET r.id = row.id, r.created = $now, r.source_type = 'openlineage', r.operation = 'run_event',
                   r.source_kind = 'container', r.source_id = s.id, r.source_container_id = s.id, r.target_kind = 'container',
                   r.target_id = t.id, r.target_container_id = t.id,
                   r.intervals = $intervals
                 SET r.last_asserted_at = row.at
                 MERGE (v:Evidence {edge_id: r.id, key: row.key})
                 SET v.provider = row.producer, v.evidence_type = 'run_event', v.authorship = 'asserted',
                   v.observed_at = row.at, v.details = row.details, v.retired_at = null",
            ))
            .param("rows", with_ids(crows, 0))))
            .await?;
        }
        if !frows.is_empty() {
            txn.run(run(params(query(
                "UNWIND $rows AS row
                 MATCH (sc:Container {key: row.sc}) MATCH (tc:Container {key: row.tc})
                 MATCH (s:Field {key: toString(sc.id) + '/' + row.sf}) MATCH (t:Field {key: toString(tc.id) + '/' + row.tf})
                 MERGE (s)-[r:LINEAGE {ukey: row.ukey}]->(t)
                 ON CREATE SET r.id = row.id, r.created = $now, r.source_type = 'openlineage', r.operation = 'run_event',
                   r.source_kind = 'field', r.source_id = s.id, r.source_container_id = sc.id, r.target_kind = 'field',
                   r.target_id = t.id, r.target_container_id = tc.id, r.intervals = $intervals
                 SET r.last_asserted_at = row.at, r.transformations = row.tr, r.derived = row.derived
                 MERGE (v:Evidence {edge_id: r.id, key: row.key})
                 SET v.provider = row.producer, v.evidence_type = 'run_event', v.authorship = 'asserted',
                   v.observed_at = row.at, v.details = row.details, v.retired_at = null",
            ))
            .param("rows", with_ids(frows, ncrows))))
            .await?;
        }
        txn.run(run(query(&format!(
            "UNWIND $rows AS ev MATCH (e:{label} {{fingerprint: ev.fp}}) SET e.status = 'applied', e.summary = ev.summary"
        ))
        .param("rows", rows)))
        .await?;
        txn.commit().await?;
        Ok(())
    }

    /// The events of one request, one transaction each, in order (as the service applies them).
    pub async fn ingest(&self, events: &[Value]) -> anyhow::Result<usize> {
        for e in events {
            let now = tributary::domain::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            self.write(PER_EVENT_LABEL, &now, vec![self.event_rows(e, "bench", &now)]).await?;
        }
        Ok(events.len())
    }

    /// The events of one request in one transaction, each statement over all of them (#32's
    /// batched baseline), on edges and event nodes of its own, so it finds none the per-event
    /// baseline created.
    pub async fn ingest_batched(&self, events: &[Value]) -> anyhow::Result<usize> {
        let now = tributary::domain::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let rows = events.iter().map(|e| self.event_rows(e, "batch", &now)).collect();
        self.write(BATCHED_LABEL, &now, rows).await?;
        Ok(events.len())
    }
}

/// A JVM's version, heap and JIT from its arguments: the last `-XX:TieredStopAtLevel` wins, as
/// in the JVM (below 4: no C2).
fn describe_jvm(vm: &str, args: &[String]) -> String {
    let heap = args.iter().rev().find_map(|a| a.strip_prefix("-Xmx")).unwrap_or("default");
    let level =
        args.iter().rev().find_map(|a| a.strip_prefix("-XX:TieredStopAtLevel=")).and_then(|l| l.parse::<u8>().ok());
    let jit = match level {
        Some(l) if l < 4 => format!("JIT C1 only (TieredStopAtLevel={l})"),
        _ => "JIT C1+C2 (the JVM's default)".to_string(),
    };
    format!("JVM {vm}, heap {heap}, {jit}")
}

/// The event nodes of the per-event and the batched baselines.
const PER_EVENT_LABEL: &str = "BenchEvent";
const BATCHED_LABEL: &str = "BenchBatchEvent";

/// What one event writes (see `NeoBase::event_rows`).
struct EventRows {
    event: BoltType,
    crows: Vec<BoltType>,
    frows: Vec<BoltType>,
}

fn map(entries: Vec<(&str, BoltType)>) -> BoltType {
    BoltType::Map(entries.into_iter().map(|(k, v)| (neo4rs::BoltString::from(k), v)).collect::<neo4rs::BoltMap>())
}

const UP: &str = "UNWIND $ids AS id
MATCH (t:Container {id: id})<-[r:LINEAGE]-(s)
WHERE r.retired_at IS NULL AND NOT t.deleted AND (s:External OR (s:Container AND NOT s.deleted))
RETURN r.id AS id, r.source_type AS st, s.id AS sid, s.fqn AS sfqn, t.id AS tid, null AS tfqn";

const DOWN: &str = "UNWIND $ids AS id
MATCH (s:Container {id: id})-[r:LINEAGE]->(t)
WHERE r.retired_at IS NULL AND NOT s.deleted AND (t:External OR (t:Container AND NOT t.deleted))
RETURN r.id AS id, r.source_type AS st, s.id AS sid, null AS sfqn, t.id AS tid, t.fqn AS tfqn";

const FIELD_UP: &str = "UNWIND $ids AS id
MATCH (t:Field {id: id})<-[r:LINEAGE]-(s:Field)
WHERE r.retired_at IS NULL AND NOT s.deleted AND NOT t.deleted
RETURN r.id AS id, r.source_type AS st, s.id AS sid, t.id AS tid, r.derived AS derived, r.transformations AS tr";

const FIELD_DOWN: &str = "UNWIND $ids AS id
MATCH (s:Field {id: id})-[r:LINEAGE]->(t:Field)
WHERE r.retired_at IS NULL AND NOT s.deleted AND NOT t.deleted
RETURN r.id AS id, r.source_type AS st, s.id AS sid, t.id AS tid, r.derived AS derived, r.transformations AS tr";

#[async_trait]
impl EdgeSource for NeoBase {
    async fn container_exists(&self, id: i64) -> anyhow::Result<bool> {
        let q = query("MATCH (c:Container {id: $id}) WHERE NOT c.deleted RETURN c.id AS id").param("id", id);
        Ok(!self.rows(q).await?.is_empty())
    }
    async fn field_exists(&self, id: i64) -> anyhow::Result<bool> {
        let q = query("MATCH (f:Field {id: $id}) WHERE NOT f.deleted RETURN f.id AS id").param("id", id);
        Ok(!self.rows(q).await?.is_empty())
    }
    async fn container_edges(&self, ids: &[i64], dir: Dir) -> anyhow::Result<Vec<BEdge>> {
        let rows = self.edge_rows_of(if dir == Dir::Up { UP } else { DOWN }, ids).await?;
        rows.iter()
            .map(|r| {
                Ok(BEdge {
                    id: row_i64(r, "id")?,
                    src: self.end(r.get::<Option<i64>>("sid")?, r.get::<Option<String>>("sfqn")?)?,
                    tgt: self.end(r.get::<Option<i64>>("tid")?, r.get::<Option<String>>("tfqn")?)?,
                    ol: r.get::<String>("st")? == "openlineage",
                    derived: false,
                    carries: true,
                })
            })
            .collect()
    }
    async fn field_edges(&self, ids: &[i64], dir: Dir) -> anyhow::Result<Vec<BEdge>> {
        let rows = self.edge_rows_of(if dir == Dir::Up { FIELD_UP } else { FIELD_DOWN }, ids).await?;
        rows.iter()
            .map(|r| {
                let tr: Option<Value> = r.get::<Option<String>>("tr")?.map(|t| serde_json::from_str(&t)).transpose()?;
                Ok(BEdge {
                    id: row_i64(r, "id")?,
                    src: BEnd::F(row_i64(r, "sid")?),
                    tgt: BEnd::F(row_i64(r, "tid")?),
                    ol: r.get::<String>("st")? == "openlineage",
                    derived: r.get::<Option<bool>>("derived")?.unwrap_or(false),
                    carries: !is_indirect_only(tr.as_ref()) && !is_masking(tr.as_ref()),
                })
            })
            .collect()
    }
    async fn node_props(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, NodeProps>> {
        let containers = self
            .rows(
                query(
                    "UNWIND $ids AS id MATCH (c:Container {id: id}) WHERE NOT c.deleted
                     RETURN c.id AS id, c.name AS name, c.container_type AS ct, c.datastore_id AS ds",
                )
                .param("ids", ids.to_vec()),
            )
            .await?;
        let counts = self
            .rows(
                query(
                    "UNWIND $ids AS id MATCH (c:Container {id: id}) WHERE NOT c.deleted
                     RETURN id, COUNT { MATCH (f:Field {container_id: id}) WHERE NOT f.deleted } AS n",
                )
                .param("ids", ids.to_vec()),
            )
            .await?;
        let mut ds_ids: Vec<i64> = containers.iter().map(|r| row_i64(r, "ds")).collect::<anyhow::Result<_>>()?;
        ds_ids.sort_unstable();
        ds_ids.dedup();
        let datastores = self
            .rows(
                query("UNWIND $ids AS id MATCH (d:Datastore {id: id}) RETURN d.id AS id, d.name AS name")
                    .param("ids", ds_ids),
            )
            .await?;
        let ds_name: HashMap<i64, String> = datastores
            .iter()
            .map(|r| Ok((row_i64(r, "id")?, r.get::<String>("name")?)))
            .collect::<anyhow::Result<_>>()?;
        let count: HashMap<i64, i64> =
            counts.iter().map(|r| Ok((row_i64(r, "id")?, row_i64(r, "n")?))).collect::<anyhow::Result<_>>()?;
        containers
            .iter()
            .map(|r| {
                let id = row_i64(r, "id")?;
                Ok((
                    id,
                    NodeProps {
                        name: r.get("name")?,
                        container_type: r.get("ct")?,
                        datastore: ds_name.get(&row_i64(r, "ds")?).cloned().unwrap_or_default(),
                        field_count: count.get(&id).copied().unwrap_or(0),
                    },
                ))
            })
            .collect()
    }
    async fn container_names(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, String>> {
        let rows = self
            .rows(
                query("UNWIND $ids AS id MATCH (c:Container {id: id}) WHERE NOT c.deleted RETURN c.id AS id, c.name AS name")
                    .param("ids", ids.to_vec()),
            )
            .await?;
        rows.iter().map(|r| Ok((row_i64(r, "id")?, r.get::<String>("name")?))).collect()
    }
    async fn field_props(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, (String, i64)>> {
        let rows = self
            .rows(
                query(
                    "UNWIND $ids AS id MATCH (f:Field {id: id}) WHERE NOT f.deleted
                     RETURN f.id AS id, f.name AS name, f.container_id AS c",
                )
                .param("ids", ids.to_vec()),
            )
            .await?;
        rows.iter().map(|r| Ok((row_i64(r, "id")?, (r.get::<String>("name")?, row_i64(r, "c")?)))).collect()
    }
    fn external(&self, x: u32) -> &str {
        self.externals.get(x as usize).map(String::as_str).unwrap_or("")
    }
    fn statements(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }
    fn edge_rows(&self) -> u64 {
        self.edge_rows.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::describe_jvm;

    #[test]
    fn the_last_tiered_stop_level_names_the_jit() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let c1 = describe_jvm("17", &args(&["-Xmx768m", "-XX:TieredStopAtLevel=1"]));
        assert_eq!(c1, "JVM 17, heap 768m, JIT C1 only (TieredStopAtLevel=1)");
        // scripts/neo4j-start appends TRIBUTARY_NEO4J_JAVA_OPTS after its own flags.
        let c2 = describe_jvm("17", &args(&["-XX:TieredStopAtLevel=1", "-XX:TieredStopAtLevel=4"]));
        assert_eq!(c2, "JVM 17, heap default, JIT C1+C2 (the JVM's default)");
    }
}
