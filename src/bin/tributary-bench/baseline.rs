//! The baselines: the same questions answered without the service. The traversals below follow
//! the service's semantics exactly (checked response by response in the benchmark), over an
//! `EdgeSource`: plain adjacency arrays in memory (the embedded store's limit) or hand-written
//! Cypher sent through neo4rs (Neo4j's). A second axum router serves them on the same HTTP stack
//! and with the same request bodies as the service's `/graphql`, and answers in serde_json.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde::Serialize;
use serde_json::{json, Value};

use crate::gen::{container_name, field_name, source_type, EndRef, Graph, TRANSFORMS};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    Up,
    Down,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BEnd {
    C(i64),
    F(i64),
    X(u32),
}

#[derive(Clone, Debug)]
pub struct BEdge {
    pub id: i64,
    pub src: BEnd,
    pub tgt: BEnd,
    pub ol: bool,
    pub derived: bool,
    /// Field edges: carries the value (neither masking nor indirect only).
    pub carries: bool,
}

pub struct NodeProps {
    pub name: String,
    pub container_type: String,
    pub datastore: String,
    pub field_count: i64,
}

/// Where a traversal reads edges and node attributes, one batched call per level.
#[async_trait]
pub trait EdgeSource: Send + Sync {
    async fn container_exists(&self, id: i64) -> anyhow::Result<bool>;
    async fn field_exists(&self, id: i64) -> anyhow::Result<bool>;
    async fn container_edges(&self, ids: &[i64], dir: Dir) -> anyhow::Result<Vec<BEdge>>;
    async fn field_edges(&self, ids: &[i64], dir: Dir) -> anyhow::Result<Vec<BEdge>>;
    async fn node_props(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, NodeProps>>;
    async fn container_names(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, String>>;
    async fn field_props(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, (String, i64)>>;
    fn external(&self, x: u32) -> &str;
    /// Statements sent so far (0 for the in-memory source).
    fn statements(&self) -> u64 {
        0
    }
    /// Edge rows returned so far (the same rows the service's statements return).
    fn edge_rows(&self) -> u64;
}

// ------------------------------------------------------------------ in memory

/// Compressed adjacency (CSR) over dense ids, and the attributes the queries return.
pub struct Adj {
    c_out_start: Vec<u32>,
    c_out: Vec<u32>,
    c_in_start: Vec<u32>,
    c_in: Vec<u32>,
    f_out_start: Vec<u32>,
    f_out: Vec<u32>,
    f_in_start: Vec<u32>,
    f_in: Vec<u32>,
    ce_src: Vec<EndRef>,
    ce_tgt: Vec<EndRef>,
    ce_ol: Vec<bool>,
    fe_src: Vec<u32>,
    fe_tgt: Vec<u32>,
    fe_ol: Vec<bool>,
    fe_derived: Vec<bool>,
    fe_carries: Vec<bool>,
    c_name: Vec<String>,
    c_view: Vec<bool>,
    c_ds: Vec<u8>,
    c_fields: Vec<u32>,
    ds_name: Vec<String>,
    f_name: Vec<String>,
    f_container: Vec<u32>,
    externals: Vec<String>,
    edge_rows: std::sync::atomic::AtomicU64,
}

fn csr(n: usize, keys: impl Iterator<Item = Option<usize>> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for k in keys.clone().flatten() {
        start[k + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut out = vec![0u32; start[n] as usize];
    for (e, k) in keys.enumerate() {
        if let Some(k) = k {
            out[fill[k] as usize] = e as u32;
            fill[k] += 1;
        }
    }
    (start, out)
}

impl Adj {
    pub fn build(g: &Graph) -> Adj {
        let n = g.containers.len();
        let nf = g.field_container.len();
        let c_of = |r: EndRef| match r {
            EndRef::C(c) => Some(c),
            EndRef::X(_) => None,
        };
        let (c_out_start, c_out) = csr(n, g.cedges.iter().map(|e| c_of(e.src)));
        let (c_in_start, c_in) = csr(n, g.cedges.iter().map(|e| c_of(e.tgt)));
        let (f_out_start, f_out) = csr(nf, g.fedges.iter().map(|e| Some(e.src)));
        let (f_in_start, f_in) = csr(nf, g.fedges.iter().map(|e| Some(e.tgt)));
        Adj {
            c_out_start,
            c_out,
            c_in_start,
            c_in,
            f_out_start,
            f_out,
            f_in_start,
            f_in,
            ce_src: g.cedges.iter().map(|e| e.src).collect(),
            ce_tgt: g.cedges.iter().map(|e| e.tgt).collect(),
            ce_ol: g.cedges.iter().map(|e| e.ol).collect(),
            fe_src: g.fedges.iter().map(|e| e.src as u32).collect(),
            fe_tgt: g.fedges.iter().map(|e| e.tgt as u32).collect(),
            fe_ol: g.fedges.iter().map(|e| e.ol).collect(),
            fe_derived: g.fedges.iter().map(|e| TRANSFORMS[e.kind as usize].3).collect(),
            fe_carries: g
                .fedges
                .iter()
                .map(|e| {
                    let (t, _, masking, _) = TRANSFORMS[e.kind as usize];
                    !masking && t != "INDIRECT"
                })
                .collect(),
            c_name: (0..n).map(|i| container_name(g, i)).collect(),
            c_view: g.containers.iter().map(|c| c.view).collect(),
            c_ds: g.containers.iter().map(|c| c.ds as u8).collect(),
            c_fields: g.containers.iter().map(|c| c.n_fields as u32).collect(),
            ds_name: g.datastores.iter().map(|d| d.name.clone()).collect(),
            f_name: (0..nf).map(|f| field_name(g, f)).collect(),
            f_container: g.field_container.clone(),
            externals: g.externals.clone(),
            edge_rows: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Heap bytes of the arrays (capacity, plus the text of every string).
    pub fn heap_bytes(&self) -> usize {
        fn v<T>(x: &Vec<T>) -> usize {
            x.capacity() * std::mem::size_of::<T>()
        }
        fn s(x: &Vec<String>) -> usize {
            v(x) + x.iter().map(String::capacity).sum::<usize>()
        }
        v(&self.c_out_start)
            + v(&self.c_out)
            + v(&self.c_in_start)
            + v(&self.c_in)
            + v(&self.f_out_start)
            + v(&self.f_out)
            + v(&self.f_in_start)
            + v(&self.f_in)
            + v(&self.ce_src)
            + v(&self.ce_tgt)
            + v(&self.ce_ol)
            + v(&self.fe_src)
            + v(&self.fe_tgt)
            + v(&self.fe_ol)
            + v(&self.fe_derived)
            + v(&self.fe_carries)
            + s(&self.c_name)
            + v(&self.c_view)
            + v(&self.c_ds)
            + v(&self.c_fields)
            + s(&self.ds_name)
            + s(&self.f_name)
            + v(&self.f_container)
            + s(&self.externals)
    }

    fn cend(r: EndRef) -> BEnd {
        match r {
            EndRef::C(c) => BEnd::C(c as i64 + 1),
            EndRef::X(x) => BEnd::X(x as u32),
        }
    }

    fn cedge(&self, e: u32) -> BEdge {
        let e = e as usize;
        BEdge {
            id: e as i64 + 1,
            src: Self::cend(self.ce_src[e]),
            tgt: Self::cend(self.ce_tgt[e]),
            ol: self.ce_ol[e],
            derived: false,
            carries: true,
        }
    }

    fn fedge(&self, e: u32) -> BEdge {
        let i = e as usize;
        BEdge {
            id: (self.ce_src.len() + i) as i64 + 1,
            src: BEnd::F(self.fe_src[i] as i64 + 1),
            tgt: BEnd::F(self.fe_tgt[i] as i64 + 1),
            ol: self.fe_ol[i],
            derived: self.fe_derived[i],
            carries: self.fe_carries[i],
        }
    }

    fn index(&self, id: i64, len: usize) -> Option<usize> {
        usize::try_from(id - 1).ok().filter(|&i| i < len)
    }

    /// The edges of `ids` (of `len` nodes) in one direction's CSR lists, counted as rows read:
    /// containers and fields differ only in which lists and how an edge is built.
    fn adjacent(
        &self,
        ids: &[i64],
        len: usize,
        start: &[u32],
        list: &[u32],
        edge: impl Fn(u32) -> BEdge,
    ) -> Vec<BEdge> {
        let mut out = Vec::new();
        for &id in ids {
            if let Some(i) = self.index(id, len) {
                for &e in &list[start[i] as usize..start[i + 1] as usize] {
                    out.push(edge(e));
                }
            }
        }
        self.edge_rows.fetch_add(out.len() as u64, std::sync::atomic::Ordering::Relaxed);
        out
    }
}

#[async_trait]
impl EdgeSource for Adj {
    async fn container_exists(&self, id: i64) -> anyhow::Result<bool> {
        Ok(self.index(id, self.c_name.len()).is_some())
    }
    async fn field_exists(&self, id: i64) -> anyhow::Result<bool> {
        Ok(self.index(id, self.f_name.len()).is_some())
    }
    async fn container_edges(&self, ids: &[i64], dir: Dir) -> anyhow::Result<Vec<BEdge>> {
        let (start, list) = match dir {
            Dir::Up => (&self.c_in_start, &self.c_in),
            Dir::Down => (&self.c_out_start, &self.c_out),
        };
        Ok(self.adjacent(ids, self.c_name.len(), start, list, |e| self.cedge(e)))
    }
    async fn field_edges(&self, ids: &[i64], dir: Dir) -> anyhow::Result<Vec<BEdge>> {
        let (start, list) = match dir {
            Dir::Up => (&self.f_in_start, &self.f_in),
            Dir::Down => (&self.f_out_start, &self.f_out),
        };
        Ok(self.adjacent(ids, self.f_name.len(), start, list, |e| self.fedge(e)))
    }
    async fn node_props(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, NodeProps>> {
        let mut out = HashMap::with_capacity(ids.len());
        for &id in ids {
            if let Some(i) = self.index(id, self.c_name.len()) {
                out.insert(
                    id,
                    NodeProps {
                        name: self.c_name[i].clone(),
                        container_type: if self.c_view[i] { "view" } else { "table" }.to_string(),
                        datastore: self.ds_name[self.c_ds[i] as usize].clone(),
                        field_count: i64::from(self.c_fields[i]),
                    },
                );
            }
        }
        Ok(out)
    }
    async fn container_names(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, String>> {
        Ok(ids.iter().filter_map(|&id| Some((id, self.c_name[self.index(id, self.c_name.len())?].clone()))).collect())
    }
    async fn field_props(&self, ids: &[i64]) -> anyhow::Result<HashMap<i64, (String, i64)>> {
        Ok(ids
            .iter()
            .filter_map(|&id| {
                let i = self.index(id, self.f_name.len())?;
                Some((id, (self.f_name[i].clone(), i64::from(self.f_container[i]) + 1)))
            })
            .collect())
    }
    fn external(&self, x: u32) -> &str {
        &self.externals[x as usize]
    }
    fn edge_rows(&self) -> u64 {
        self.edge_rows.load(std::sync::atomic::Ordering::Relaxed)
    }
}

// ------------------------------------------------------------------ the answers (wire shapes)

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NodeOut {
    id: i64,
    name: String,
    container_type: String,
    is_target: bool,
    has_upstream: bool,
    has_downstream: bool,
    field_count: i64,
    datastore: NameOut,
}

#[derive(Serialize)]
struct NameOut {
    name: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EdgeOut {
    id: i64,
    source_container_id: Option<i64>,
    target_container_id: Option<i64>,
    source_type: &'static str,
}

#[derive(Serialize)]
struct ExtNodeOut {
    id: String,
    fqn: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExtEdgeOut {
    id: i64,
    source_container_id: Option<i64>,
    target_container_id: Option<i64>,
    source_external_fqn: Option<String>,
    target_external_fqn: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GraphOut {
    nodes: Vec<NodeOut>,
    edges: Vec<EdgeOut>,
    external_nodes: Vec<ExtNodeOut>,
    external_edges: Vec<ExtEdgeOut>,
}

fn cid(e: &BEnd) -> Option<i64> {
    match e {
        BEnd::C(id) => Some(*id),
        _ => None,
    }
}

fn node_id(e: &BEnd) -> Option<i64> {
    match e {
        BEnd::C(id) | BEnd::F(id) => Some(*id),
        BEnd::X(_) => None,
    }
}

/// `lineageGraph(containerId, depth)` without a side: the service's semantics.
pub async fn lineage_graph<S: EdgeSource + ?Sized>(s: &S, centre: i64, depth: usize) -> anyhow::Result<Value> {
    if !s.container_exists(centre).await? {
        anyhow::bail!("Container {centre} not found");
    }
    let mut nodes: HashSet<i64> = HashSet::from([centre]);
    let mut externals: BTreeMap<i64, BEdge> = BTreeMap::new();
    for dir in [Dir::Up, Dir::Down] {
        let mut seen: HashSet<i64> = HashSet::from([centre]);
        let mut frontier = vec![centre];
        for _ in 1..=depth {
            if frontier.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for e in s.container_edges(&frontier, dir).await? {
                let far = if dir == Dir::Up { &e.src } else { &e.tgt };
                match far {
                    BEnd::C(id) => {
                        if seen.insert(*id) {
                            next.push(*id);
                        }
                    }
                    BEnd::X(_) => {
                        externals.insert(e.id, e);
                    }
                    BEnd::F(_) => {}
                }
            }
            nodes.extend(next.iter().copied());
            frontier = next;
        }
    }
    let mut ids: Vec<i64> = nodes.iter().copied().collect();
    ids.sort_unstable();
    let upstream = s.container_edges(&ids, Dir::Up).await?;
    let downstream = s.container_edges(&ids, Dir::Down).await?;
    let outside = |e: &BEdge, end: &BEnd| match end {
        BEnd::C(id) => !nodes.contains(id),
        _ => !externals.contains_key(&e.id),
    };
    let has_up: HashSet<i64> = upstream.iter().filter(|e| outside(e, &e.src)).filter_map(|e| cid(&e.tgt)).collect();
    let has_down: HashSet<i64> = downstream.iter().filter(|e| outside(e, &e.tgt)).filter_map(|e| cid(&e.src)).collect();
    let mut edges: Vec<&BEdge> =
        downstream.iter().filter(|e| matches!(e.tgt, BEnd::C(id) if nodes.contains(&id))).collect();
    edges.sort_unstable_by_key(|e| e.id);
    let mut props = s.node_props(&ids).await?;
    let mut ext_nodes: BTreeMap<String, String> = BTreeMap::new();
    for e in externals.values() {
        for end in [&e.src, &e.tgt] {
            if let BEnd::X(x) = end {
                let fqn = s.external(*x);
                ext_nodes.entry(format!("ext:{}:{fqn}", source_type(e.ol))).or_insert_with(|| fqn.to_string());
            }
        }
    }
    let ext = |end: &BEnd| match end {
        BEnd::X(x) => Some(s.external(*x).to_string()),
        _ => None,
    };
    let out = GraphOut {
        nodes: ids
            .iter()
            .filter_map(|id| {
                let p = props.remove(id)?;
                Some(NodeOut {
                    id: *id,
                    name: p.name,
                    container_type: p.container_type,
                    is_target: *id == centre,
                    has_upstream: has_up.contains(id),
                    has_downstream: has_down.contains(id),
                    field_count: p.field_count,
                    datastore: NameOut { name: p.datastore },
                })
            })
            .collect(),
        edges: edges
            .iter()
            .map(|e| EdgeOut {
                id: e.id,
                source_container_id: cid(&e.src),
                target_container_id: cid(&e.tgt),
                source_type: source_type(e.ol),
            })
            .collect(),
        external_nodes: ext_nodes.into_iter().map(|(id, fqn)| ExtNodeOut { id, fqn }).collect(),
        external_edges: externals
            .values()
            .map(|e| ExtEdgeOut {
                id: e.id,
                source_container_id: cid(&e.src),
                target_container_id: cid(&e.tgt),
                source_external_fqn: ext(&e.src),
                target_external_fqn: ext(&e.tgt),
            })
            .collect(),
    };
    Ok(json!({"data": {"lineageGraph": out}}))
}

struct Reached {
    id: i64,
    distance: usize,
    via: BEdge,
    derived: bool,
}

/// The service's `transitive`: nearest first, edges of a level in id order, one level read
/// past `depth` to tell whether the answer was cut.
async fn transitive<S: EdgeSource + ?Sized>(
    s: &S,
    start: i64,
    depth: usize,
    dir: Dir,
    limit: usize,
    over_fields: bool,
) -> anyhow::Result<(bool, Vec<Reached>)> {
    let mut seen: HashMap<i64, bool> = HashMap::from([(start, false)]);
    let mut reached = Vec::new();
    let mut frontier = vec![start];
    let mut partial = false;
    for level in 1..=depth + 1 {
        if frontier.is_empty() {
            break;
        }
        let mut found = if over_fields {
            s.field_edges(&frontier, dir).await?.into_iter().filter(|e| e.carries).collect()
        } else {
            s.container_edges(&frontier, dir).await?
        };
        found.sort_unstable_by_key(|e| e.id);
        let mut next = Vec::new();
        for e in found {
            let (near, far) = if dir == Dir::Up { (&e.tgt, &e.src) } else { (&e.src, &e.tgt) };
            let Some(far) = node_id(far) else { continue };
            if seen.contains_key(&far) {
                continue;
            }
            if level > depth || reached.len() >= limit {
                partial = true;
                break;
            }
            let Some(near) = node_id(near) else { continue };
            let derived = seen.get(&near).copied().unwrap_or(false) || e.derived;
            seen.insert(far, derived);
            next.push(far);
            reached.push(Reached { id: far, distance: level, via: e, derived });
        }
        if partial {
            break;
        }
        frontier = next;
    }
    Ok((partial, reached))
}

/// `impact(containerId, depth, side: DOWNSTREAM, limit)`.
pub async fn impact<S: EdgeSource + ?Sized>(s: &S, c: i64, depth: usize, limit: usize) -> anyhow::Result<Value> {
    if !s.container_exists(c).await? {
        anyhow::bail!("Container {c} not found");
    }
    let (partial, reached) = transitive(s, c, depth, Dir::Down, limit, false).await?;
    let ids: Vec<i64> = reached.iter().map(|r| r.id).collect();
    let names = s.container_names(&ids).await?;
    let containers: Vec<Value> = reached
        .iter()
        .map(|r| {
            json!({
                "distance": r.distance,
                "container": names.get(&r.id).map(|n| json!({"id": r.id, "name": n})),
                "via": {"id": r.via.id, "sourceContainerId": cid(&r.via.src)},
            })
        })
        .collect();
    Ok(json!({"data": {"impact": {"isPartial": partial, "containers": containers}}}))
}

/// `piiFlow(fieldId, depth, side: DOWNSTREAM, limit)` with the default options.
pub async fn pii_flow<S: EdgeSource + ?Sized>(s: &S, f: i64, depth: usize, limit: usize) -> anyhow::Result<Value> {
    if !s.field_exists(f).await? {
        anyhow::bail!("Field {f} not found");
    }
    let (partial, reached) = transitive(s, f, depth, Dir::Down, limit, true).await?;
    let ids: Vec<i64> = reached.iter().map(|r| r.id).collect();
    let props = s.field_props(&ids).await?;
    let fields: Vec<Value> = reached
        .iter()
        .map(|r| {
            json!({
                "distance": r.distance,
                "derived": r.derived,
                "field": props.get(&r.id).map(|(name, c)| json!({"id": r.id, "name": name, "containerId": c})),
                "via": {"id": r.via.id},
            })
        })
        .collect();
    Ok(json!({"data": {"piiFlow": {"isPartial": partial, "fields": fields}}}))
}

// ------------------------------------------------------------------ the queries, as sent

pub const LINEAGE_GRAPH: &str = "query($c: Int!, $d: Int!) { lineageGraph(containerId: $c, depth: $d) {
  nodes { id name containerType isTarget hasUpstream hasDownstream fieldCount datastore { name } }
  edges { id sourceContainerId targetContainerId sourceType }
  externalNodes { id fqn }
  externalEdges { id sourceContainerId targetContainerId sourceExternalFqn targetExternalFqn } } }";

pub const IMPACT: &str =
    "query($c: Int!, $d: Int!, $l: Int!) { impact(containerId: $c, depth: $d, side: DOWNSTREAM, limit: $l) {
  isPartial containers { distance container { id name } via { id sourceContainerId } } } }";

pub const PII_FLOW: &str =
    "query($f: Int!, $d: Int!, $l: Int!) { piiFlow(fieldId: $f, depth: $d, side: DOWNSTREAM, limit: $l) {
  isPartial fields { distance derived field { id name containerId } via { id } } } }";

/// One query: the GraphQL request body (sent as is to both servers) and the baseline's path.
#[derive(Clone, Debug)]
pub struct Ask {
    pub path: &'static str,
    pub body: Value,
}

impl Ask {
    pub fn lineage_graph(c: i64, depth: usize) -> Ask {
        Ask { path: "/lineageGraph", body: json!({"query": LINEAGE_GRAPH, "variables": {"c": c, "d": depth}}) }
    }
    pub fn impact(c: i64, depth: usize, limit: usize) -> Ask {
        Ask { path: "/impact", body: json!({"query": IMPACT, "variables": {"c": c, "d": depth, "l": limit}}) }
    }
    pub fn pii_flow(f: i64, depth: usize, limit: usize) -> Ask {
        Ask { path: "/piiFlow", body: json!({"query": PII_FLOW, "variables": {"f": f, "d": depth, "l": limit}}) }
    }
}

// ------------------------------------------------------------------ the baseline server

#[derive(Clone)]
pub struct BaselineState {
    pub source: Arc<dyn EdgeSource>,
    /// Neo4j only: the hand-written per-event ingest transactions.
    pub neo: Option<Arc<crate::neo::NeoBase>>,
}

fn var(body: &Value, name: &str) -> anyhow::Result<i64> {
    body["variables"][name].as_i64().ok_or_else(|| anyhow::anyhow!("variable {name} missing"))
}

fn usize_var(body: &Value, name: &str) -> anyhow::Result<usize> {
    Ok(usize::try_from(var(body, name)?)?)
}

fn answer(result: anyhow::Result<Value>) -> Response {
    match result {
        Ok(v) => match serde_json::to_vec(&v) {
            Ok(bytes) => ([(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
        },
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

async fn graph_route(State(st): State<BaselineState>, body: Bytes) -> Response {
    let run = async {
        let body: Value = serde_json::from_slice(&body)?;
        lineage_graph(st.source.as_ref(), var(&body, "c")?, usize_var(&body, "d")?).await
    };
    answer(run.await)
}

async fn impact_route(State(st): State<BaselineState>, body: Bytes) -> Response {
    let run = async {
        let body: Value = serde_json::from_slice(&body)?;
        impact(st.source.as_ref(), var(&body, "c")?, usize_var(&body, "d")?, usize_var(&body, "l")?).await
    };
    answer(run.await)
}

async fn pii_route(State(st): State<BaselineState>, body: Bytes) -> Response {
    let run = async {
        let body: Value = serde_json::from_slice(&body)?;
        pii_flow(st.source.as_ref(), var(&body, "f")?, usize_var(&body, "d")?, usize_var(&body, "l")?).await
    };
    answer(run.await)
}

/// The ingest baseline: the body is parsed as JSON, and nothing else happens.
async fn parse_route(body: Bytes) -> Response {
    match serde_json::from_slice::<Value>(&body) {
        Ok(v) => {
            let n = v.as_array().map_or(1, Vec::len);
            (StatusCode::CREATED, axum::Json(json!({"received": n}))).into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

/// The Neo4j ingest baseline: the same body, parsed, then one hand-written transaction per event.
async fn ingest_cypher_route(State(st): State<BaselineState>, body: Bytes) -> Response {
    ingest_cypher(&st, &body, false).await
}

/// The batched Neo4j ingest baseline: the same writes, one transaction for the request, each
/// statement over all of its events (`UNWIND`).
async fn ingest_cypher_batched_route(State(st): State<BaselineState>, body: Bytes) -> Response {
    ingest_cypher(&st, &body, true).await
}

/// The body's events through one of the two Neo4j ingest baselines.
async fn ingest_cypher(st: &BaselineState, body: &[u8], batched: bool) -> Response {
    let run = async {
        let neo = st.neo.as_ref().ok_or_else(|| anyhow::anyhow!("no Neo4j baseline"))?;
        let v: Value = serde_json::from_slice(body)?;
        let events = v.as_array().ok_or_else(|| anyhow::anyhow!("not a list"))?;
        let n = if batched { neo.ingest_batched(events).await? } else { neo.ingest(events).await? };
        Ok(json!({"received": n}))
    };
    answer(run.await)
}

pub fn router(state: BaselineState) -> Router {
    Router::new()
        .route("/lineageGraph", post(graph_route))
        .route("/impact", post(impact_route))
        .route("/piiFlow", post(pii_route))
        .route("/parse", post(parse_route))
        .route("/ingestCypher", post(ingest_cypher_route))
        .route("/ingestCypherBatched", post(ingest_cypher_batched_route))
        .layer(axum::extract::DefaultBodyLimit::max(64 * 1024 * 1024))
        .with_state(state)
}
