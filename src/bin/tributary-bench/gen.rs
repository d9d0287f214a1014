//! The seeded generator of realistic lineage: layered pipelines (raw → staging → intermediate →
//! marts), fan-in and fan-out with long tails, diamonds, a few hubs with thousands of downstream
//! tables, some cycles, external assets at the edges, fields per container and field-level edges
//! with OpenLineage-shaped transformations. Everything is a function of the seed, except the
//! event times of the OpenLineage events (they must be close to the server's clock).

use std::collections::HashSet;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{json, Value};
use tributary::domain::{Container, Datastore, Edge, End, Field, Interval};
use tributary::store::Record;

/// SplitMix64: small, fast, and the same sequence on every platform for a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// An index in `0..n` skewed towards 0 (a power law): a few popular tables feed many.
    pub fn skewed(&mut self, n: usize) -> usize {
        ((n as f64 * self.unit().powf(3.0)) as usize).min(n.saturating_sub(1))
    }
    pub fn uuid(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
    }
}

pub const LAYERS: [&str; 4] = ["raw", "staging", "intermediate", "marts"];
const PREFIX: [&str; 4] = ["src", "stg", "int", "fct"];
const WORDS: [&str; 16] = [
    "orders",
    "customers",
    "payments",
    "sessions",
    "products",
    "invoices",
    "shipments",
    "events",
    "accounts",
    "refunds",
    "inventory",
    "clicks",
    "subscriptions",
    "campaigns",
    "tickets",
    "suppliers",
];
const FIELD_WORDS: [&str; 16] = [
    "customer_email",
    "amount",
    "created_at",
    "status",
    "country",
    "user_id",
    "sku",
    "price",
    "quantity",
    "updated_at",
    "channel",
    "phone",
    "region",
    "currency",
    "discount",
    "score",
];
const TYPES: [&str; 6] = ["BIGINT", "VARCHAR", "TIMESTAMP", "DECIMAL(18,2)", "BOOLEAN", "DATE"];

/// Field-edge transformations: (type, subtype, masking, derived).
pub const TRANSFORMS: [(&str, &str, bool, bool); 5] = [
    ("DIRECT", "IDENTITY", false, false),
    ("DIRECT", "TRANSFORMATION", false, true),
    ("DIRECT", "AGGREGATION", false, true),
    ("DIRECT", "TRANSFORMATION", true, true),
    ("INDIRECT", "FILTER", false, false),
];

fn transform_kind(rng: &mut Rng) -> u8 {
    match rng.below(100) {
        0..=49 => 0,
        50..=74 => 1,
        75..=82 => 2,
        83..=87 => 3,
        _ => 4,
    }
}

pub fn transformations_json(kind: u8) -> Value {
    let (t, s, masking, _) = TRANSFORMS[kind as usize];
    json!([{"type": t, "subtype": s, "description": "", "masking": masking}])
}

pub struct Ds {
    pub name: String,
    pub kind: &'static str,
    pub namespace: String,
    pub database: &'static str,
}

pub struct C {
    pub ds: usize,
    pub layer: usize,
    pub first_field: usize,
    pub n_fields: usize,
    pub view: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EndRef {
    C(usize),
    X(usize),
}

pub struct CE {
    pub src: EndRef,
    pub tgt: EndRef,
    pub ol: bool,
}

pub struct FE {
    pub src: usize,
    pub tgt: usize,
    pub kind: u8,
    pub ol: bool,
}

pub struct Graph {
    pub datastores: Vec<Ds>,
    pub containers: Vec<C>,
    /// The container (index) of each field.
    pub field_container: Vec<u32>,
    pub cedges: Vec<CE>,
    pub fedges: Vec<FE>,
    pub externals: Vec<String>,
    pub hubs: Vec<usize>,
    /// Typical lineageGraph centres: intermediate tables with edges on both sides.
    pub centres: Vec<usize>,
    /// A field of the first hub with the most downstream field edges (piiFlow).
    pub hub_field: usize,
    /// One well-connected field per centre (the mixed workload's piiFlow).
    pub centre_fields: Vec<usize>,
    pub layers: [Vec<usize>; 4],
}

pub fn container_name(g: &Graph, i: usize) -> String {
    let layer = g.containers[i].layer;
    format!("{}_{}_{:06}", PREFIX[layer], WORDS[i % WORDS.len()], i)
}

pub fn field_name(g: &Graph, f: usize) -> String {
    let c = g.field_container[f] as usize;
    let j = f - g.containers[c].first_field;
    if j == 0 {
        "id".to_string()
    } else {
        format!("{}_{}", FIELD_WORDS[(j + c) % FIELD_WORDS.len()], j)
    }
}

pub fn field_type(f: usize) -> &'static str {
    TYPES[f % TYPES.len()]
}

/// `database.schema.name`: the container's key in its datastore, and its OpenLineage name.
pub fn container_key(g: &Graph, i: usize) -> String {
    let c = &g.containers[i];
    format!("{}.{}.{}", g.datastores[c.ds].database, LAYERS[c.layer], container_name(g, i))
}

pub fn base_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).single().unwrap_or_else(Utc::now)
}

pub fn source_type(ol: bool) -> &'static str {
    if ol {
        "openlineage"
    } else {
        "manual"
    }
}

impl Graph {
    pub fn generate(n_containers: usize, n_field_edges: usize, seed: u64) -> Graph {
        let n = n_containers.max(40);
        let mut rng = Rng::new(seed);
        let datastores = vec![
            Ds {
                name: "oltp".into(),
                kind: "postgresql",
                namespace: "postgres://oltp.internal:5432".into(),
                database: "shop",
            },
            Ds {
                name: "warehouse".into(),
                kind: "snowflake",
                namespace: "snowflake://acme.eu-west-1".into(),
                database: "analytics",
            },
        ];
        // Layers by index: lower indexes are upstream.
        let bounds = [0, n * 25 / 100, n * 55 / 100, n * 80 / 100, n];
        let mut layers: [Vec<usize>; 4] = Default::default();
        let mut containers = Vec::with_capacity(n);
        let mut field_container = Vec::new();
        let hub_count = (n / 20_000 + 3).min(8);
        for layer in 0..4 {
            for i in bounds[layer]..bounds[layer + 1] {
                layers[layer].push(i);
                containers.push(C { ds: usize::from(layer > 0), layer, first_field: 0, n_fields: 0, view: false });
            }
        }
        // Hubs: core staging tables (customers, orders...) that thousands of tables read.
        let mut hubs = Vec::new();
        while hubs.len() < hub_count {
            let h = layers[1][rng.skewed(layers[1].len())];
            if !hubs.contains(&h) {
                hubs.push(h);
            }
        }
        for (i, c) in containers.iter_mut().enumerate() {
            let nf = if hubs.contains(&i) { 48 } else { (4.0 + (-(1.0 - rng.unit()).ln() * 8.0)).min(120.0) as usize };
            c.first_field = field_container.len();
            c.n_fields = nf;
            c.view = c.layer >= 2 && rng.chance(0.3);
            field_container.extend(std::iter::repeat_n(i as u32, nf));
        }

        let mut cedges: Vec<CE> = Vec::new();
        let mut seen: HashSet<(EndRef, EndRef)> = HashSet::new();
        let mut upstream_of: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut add = |cedges: &mut Vec<CE>, src: EndRef, tgt: EndRef, ol: bool, up: &mut Vec<Vec<usize>>| {
            if src == tgt || !seen.insert((src, tgt)) {
                return;
            }
            if let (EndRef::C(s), EndRef::C(t)) = (src, tgt) {
                up[t].push(s);
            }
            cedges.push(CE { src, tgt, ol });
        };
        let mut externals = Vec::new();
        // Raw tables loaded from files in a landing bucket.
        for &r in &layers[0] {
            if rng.chance(0.25) {
                externals.push(format!("s3://landing/{}/{}.parquet", WORDS[r % WORDS.len()], r));
                let x = externals.len() - 1;
                add(&mut cedges, EndRef::X(x), EndRef::C(r), true, &mut upstream_of);
            }
        }
        // Fan-in with a long tail; sources skewed, so fan-out has a long tail too.
        for layer in 1..4 {
            for &t in &layers[layer] {
                let k = match rng.below(100) {
                    0..=44 => 1,
                    45..=69 => 2,
                    70..=81 => 3,
                    82..=93 => 4 + rng.below(3),
                    _ => 7 + rng.below(24),
                };
                for _ in 0..k {
                    let from = if rng.chance(0.8) { layer - 1 } else { rng.below(layer) };
                    let s = layers[from][rng.skewed(layers[from].len())];
                    let ol = rng.chance(0.6);
                    add(&mut cedges, EndRef::C(s), EndRef::C(t), ol, &mut upstream_of);
                }
            }
        }
        // Chains inside the modelling layers (models built on models): deep pipelines, so a
        // depth of 20 reaches further than a depth of 5.
        for members in &layers[2..4] {
            for (p, &t) in members.iter().enumerate() {
                if p > 0 && rng.chance(0.35) {
                    let s = members[p - 1 - rng.below(p.min(200))];
                    add(&mut cedges, EndRef::C(s), EndRef::C(t), rng.chance(0.6), &mut upstream_of);
                }
            }
        }
        // Hubs: thousands of downstream tables at the large size.
        let hub_out = (n / 25).clamp(20, 5000);
        let downstream_pool: Vec<usize> = layers[2].iter().chain(&layers[3]).copied().collect();
        for &h in &hubs {
            for _ in 0..hub_out {
                let t = downstream_pool[rng.below(downstream_pool.len())];
                add(&mut cedges, EndRef::C(h), EndRef::C(t), rng.chance(0.6), &mut upstream_of);
            }
        }
        // Explicit diamonds: a → b, a → c, b → d, c → d.
        for _ in 0..(n / 200).max(2) {
            let a = layers[1][rng.below(layers[1].len())];
            let b = layers[2][rng.below(layers[2].len())];
            let c = layers[2][rng.below(layers[2].len())];
            let d = layers[3][rng.below(layers[3].len())];
            for (s, t) in [(a, b), (a, c), (b, d), (c, d)] {
                add(&mut cedges, EndRef::C(s), EndRef::C(t), true, &mut upstream_of);
            }
        }
        // Cycles: a mart written back into one of its own upstream tables (a feedback loop).
        for _ in 0..(n / 1000).max(2) {
            let m = layers[3][rng.below(layers[3].len())];
            if let Some(&u) = upstream_of[m].first() {
                let back = upstream_of[u].first().copied().unwrap_or(u);
                add(&mut cedges, EndRef::C(m), EndRef::C(back), false, &mut upstream_of);
            }
        }
        // Exports: a few marts written out to files.
        for &m in &layers[3] {
            if rng.chance(0.03) {
                externals.push(format!("s3://exports/{}/{}/", WORDS[m % WORDS.len()], m));
                let x = externals.len() - 1;
                add(&mut cedges, EndRef::C(m), EndRef::X(x), true, &mut upstream_of);
            }
        }

        // Field edges along container edges, in proportion to the narrower side's width.
        let pairs: Vec<usize> = (0..cedges.len())
            .filter(|&e| matches!((cedges[e].src, cedges[e].tgt), (EndRef::C(_), EndRef::C(_))))
            .collect();
        let width = |e: usize| match (cedges[e].src, cedges[e].tgt) {
            (EndRef::C(s), EndRef::C(t)) => containers[s].n_fields.min(containers[t].n_fields),
            _ => 0,
        };
        let total_width: usize = pairs.iter().map(|&e| width(e)).sum::<usize>().max(1);
        let mut counts: Vec<usize> = pairs.iter().map(|&e| n_field_edges * width(e) / total_width).collect();
        let mut assigned: usize = counts.iter().sum();
        let mut guard = 0;
        while assigned < n_field_edges && !pairs.is_empty() && guard < n_field_edges * 4 {
            let i = rng.below(pairs.len());
            if counts[i] < width(pairs[i]) * 2 {
                counts[i] += 1;
                assigned += 1;
            }
            guard += 1;
        }
        let mut fedges = Vec::with_capacity(n_field_edges);
        let mut fseen: HashSet<(u32, u32)> = HashSet::with_capacity(n_field_edges);
        for (i, &e) in pairs.iter().enumerate() {
            let (EndRef::C(s), EndRef::C(t)) = (cedges[e].src, cedges[e].tgt) else { continue };
            let (sc, tc) = (&containers[s], &containers[t]);
            let offset = rng.below(tc.n_fields);
            for q in 0..counts[i] {
                let tf = tc.first_field + (offset + q) % tc.n_fields;
                // Keys and identifiers keep their name downstream; the rest come from anywhere.
                let sf = if q % 5 == 0 {
                    sc.first_field + ((tf - tc.first_field) % sc.n_fields)
                } else {
                    sc.first_field + rng.skewed(sc.n_fields)
                };
                if fseen.insert((sf as u32, tf as u32)) {
                    fedges.push(FE { src: sf, tgt: tf, kind: transform_kind(&mut rng), ol: cedges[e].ol });
                }
            }
        }

        let mut g = Graph {
            datastores,
            containers,
            field_container,
            cedges,
            fedges,
            externals,
            hubs,
            centres: Vec::new(),
            hub_field: 0,
            centre_fields: Vec::new(),
            layers,
        };
        g.pick_centres(&mut rng);
        g
    }

    fn pick_centres(&mut self, rng: &mut Rng) {
        let n = self.containers.len();
        let mut indeg = vec![0usize; n];
        let mut outdeg = vec![0usize; n];
        for e in &self.cedges {
            if let EndRef::C(s) = e.src {
                outdeg[s] += 1;
            }
            if let EndRef::C(t) = e.tgt {
                indeg[t] += 1;
            }
        }
        let pool = &self.layers[2];
        let mut tries = 0;
        while self.centres.len() < 16 && tries < 10_000 {
            tries += 1;
            let c = pool[rng.below(pool.len())];
            let ok = (indeg[c] >= 1 && outdeg[c] >= 1) || tries > 5_000;
            if ok && !self.centres.contains(&c) && !self.hubs.contains(&c) {
                self.centres.push(c);
            }
        }
        let mut fout = vec![0u32; self.field_container.len()];
        for e in &self.fedges {
            fout[e.src] += 1;
        }
        let best_field = |c: usize, g: &Graph| {
            let cc = &g.containers[c];
            (cc.first_field..cc.first_field + cc.n_fields)
                .max_by_key(|&f| (fout[f], usize::MAX - f))
                .unwrap_or(cc.first_field)
        };
        self.hub_field = best_field(self.hubs[0], self);
        self.centre_fields = self.centres.iter().map(|&c| best_field(c, self)).collect();
    }

    pub fn edge_count(&self) -> usize {
        self.cedges.len() + self.fedges.len()
    }

    pub fn container_id(i: usize) -> i64 {
        i as i64 + 1
    }
    pub fn field_id(f: usize) -> i64 {
        f as i64 + 1
    }
    pub fn cedge_id(e: usize) -> i64 {
        e as i64 + 1
    }
    pub fn fedge_id(&self, e: usize) -> i64 {
        (self.cedges.len() + e) as i64 + 1
    }

    fn end(&self, r: EndRef) -> End {
        match r {
            EndRef::C(c) => End::Container { id: Self::container_id(c) },
            EndRef::X(x) => End::External { fqn: self.externals[x].clone() },
        }
    }

    fn edge_record(&self, id: i64, source: End, target: End, ol: bool, kind: Option<u8>) -> Edge {
        let created = base_time() + Duration::seconds(id);
        Edge {
            id,
            created,
            source,
            target,
            description: None,
            source_type: source_type(ol).to_string(),
            operation: ol.then(|| "run_event".to_string()),
            derived: kind.map(|k| TRANSFORMS[k as usize].3),
            transformations: kind.map(transformations_json),
            last_asserted_at: ol.then_some(created),
            retired_at: None,
            intervals: vec![Interval { from: created, to: None }],
        }
    }

    /// Datastores, containers, fields and edges: the records of the whole graph.
    pub fn record_count(&self) -> usize {
        self.datastores.len() + self.containers.len() + self.field_container.len() + self.edge_count()
    }

    /// The whole graph as `tributary export` lines, in the order `import` replays them, `size`
    /// records at a time: at the xlarge size all of them at once would take over 10 GiB.
    pub fn record_chunks(&self, size: usize) -> impl Iterator<Item = Vec<Record>> + '_ {
        let (total, size) = (self.record_count(), size.max(1));
        (0..total.div_ceil(size))
            .map(move |k| (k * size..((k + 1) * size).min(total)).map(|i| self.record(i)).collect())
    }

    /// The `i`th record of `record_chunks`.
    fn record(&self, mut i: usize) -> Record {
        if let Some(d) = self.datastores.get(i) {
            return Record::Datastore(Datastore {
                id: i as i64 + 1,
                name: d.name.clone(),
                kind: d.kind.to_string(),
                store_type: Some(d.kind.to_string()),
                namespaces: vec![d.namespace.clone()],
                enrichment_only: false,
            });
        }
        i -= self.datastores.len();
        if let Some(c) = self.containers.get(i) {
            return Record::Container(Container {
                id: Self::container_id(i),
                datastore_id: c.ds as i64 + 1,
                name: container_name(self, i),
                database: Some(self.datastores[c.ds].database.to_string()),
                schema: Some(LAYERS[c.layer].to_string()),
                container_type: if c.view { "view" } else { "table" }.to_string(),
                table_type: Some(if c.view { "VIEW" } else { "BASE TABLE" }.to_string()),
                display_name: None,
                purpose: None,
                active_anomaly_count: 0,
            });
        }
        i -= self.containers.len();
        if let Some(&c) = self.field_container.get(i) {
            return Record::Field(Field {
                id: Self::field_id(i),
                container_id: Self::container_id(c as usize),
                name: field_name(self, i),
                display_name: None,
                data_type: Some(field_type(i).to_string()),
                status: "active".into(),
                latest_profile_id: None,
                is_computed_field: false,
                active_anomaly_count: 0,
            });
        }
        i -= self.field_container.len();
        if let Some(e) = self.cedges.get(i) {
            return Record::Edge(self.edge_record(Self::cedge_id(i), self.end(e.src), self.end(e.tgt), e.ol, None));
        }
        i -= self.cedges.len();
        let e = &self.fedges[i];
        let end = |f: usize| End::Field {
            id: Self::field_id(f),
            container_id: Self::container_id(self.field_container[f] as usize),
        };
        Record::Edge(self.edge_record(self.fedge_id(i), end(e.src), end(e.tgt), e.ol, Some(e.kind)))
    }

    /// `count` OpenLineage RunEvents (START then COMPLETE per run; each job runs twice) with
    /// inputs and outputs that resolve to catalogued tables, a schema facet and column lineage
    /// on the COMPLETE output.
    pub fn openlineage_events(&self, count: usize, seed: u64) -> Vec<Value> {
        let mut rng = Rng::new(seed ^ 0x000E_1E57);
        let runs = count.div_ceil(2);
        let jobs = (runs / 2).max(1);
        let start = Utc::now() - Duration::hours(2);
        let producer = "https://github.com/acme/tributary-bench/1.0";
        let schema_url = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
        let dataset = |c: usize| json!({"namespace": self.datastores[self.containers[c].ds].namespace, "name": container_key(self, c)});
        let mut out = Vec::with_capacity(count);
        // Each job has a fixed output and inputs, so its second run re-asserts its first run's edges.
        let plans: Vec<(usize, Vec<usize>)> = (0..jobs)
            .map(|_| {
                let layer = 1 + rng.below(3);
                let t = self.layers[layer][rng.below(self.layers[layer].len())];
                let k = 1 + rng.below(3);
                let inputs: Vec<usize> = (0..k)
                    .map(|_| {
                        let from = rng.below(layer);
                        self.layers[from][rng.skewed(self.layers[from].len())]
                    })
                    .collect();
                (t, inputs)
            })
            .collect();
        for r in 0..runs {
            let job = r % jobs;
            let (t, inputs) = &plans[job];
            let run_id = rng.uuid();
            let tc = &self.containers[*t];
            let width = tc.n_fields.min(8);
            let mut lineage = serde_json::Map::new();
            let mut schema = Vec::new();
            for j in 0..width {
                let tf = tc.first_field + j;
                let name = field_name(self, tf);
                let input = inputs[j % inputs.len()];
                let ic = &self.containers[input];
                let sf = ic.first_field + if j == 0 { 0 } else { rng.below(ic.n_fields) };
                let (kind, sub, masking, _) = TRANSFORMS[transform_kind(&mut rng) as usize];
                lineage.insert(
                    name.clone(),
                    json!({"inputFields": [{
                        "namespace": self.datastores[ic.ds].namespace,
                        "name": container_key(self, input),
                        "field": field_name(self, sf),
                        "transformations": [{"type": kind, "subtype": sub, "description": "", "masking": masking}]
                    }]}),
                );
                schema.push(json!({"name": name, "type": field_type(tf)}));
            }
            for (phase, event_type) in ["START", "COMPLETE"].iter().enumerate() {
                if out.len() >= count {
                    break;
                }
                let time = start + Duration::milliseconds((2 * r + phase) as i64);
                let mut output = dataset(*t);
                if phase == 1 {
                    output["facets"] = json!({
                        "schema": {"_producer": producer, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet", "fields": schema},
                        "columnLineage": {"_producer": producer, "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet", "fields": lineage},
                    });
                }
                out.push(json!({
                    "eventType": event_type,
                    "eventTime": time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    "producer": producer,
                    "schemaURL": schema_url,
                    "run": {"runId": run_id},
                    "job": {"namespace": "bench", "name": format!("build_{}_{job}", container_name(self, *t))},
                    "inputs": inputs.iter().map(|&i| dataset(i)).collect::<Vec<_>>(),
                    "outputs": [output],
                }));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_graph() {
        let a = Graph::generate(500, 2_000, 7);
        let b = Graph::generate(500, 2_000, 7);
        assert_eq!(a.cedges.len(), b.cedges.len());
        assert_eq!(a.fedges.len(), b.fedges.len());
        assert_eq!(a.centres, b.centres);
        assert!((1_800..=2_000).contains(&a.fedges.len()), "{}", a.fedges.len());
    }

    #[test]
    fn chunks_hold_every_record_once_in_order() {
        let g = Graph::generate(300, 1_500, 3);
        let ids = |size: usize| -> Vec<(u8, i64)> {
            g.record_chunks(size)
                .flatten()
                .map(|r| match r {
                    Record::Datastore(d) => (0, d.id),
                    Record::Container(c) => (1, c.id),
                    Record::Field(f) => (2, f.id),
                    Record::Edge(e) => (3, e.id),
                    _ => (4, 0),
                })
                .collect()
        };
        let whole = ids(usize::MAX);
        assert_eq!(whole.len(), g.record_count());
        assert_eq!(ids(7), whole);
        assert!(whole.windows(2).all(|w| w[0] < w[1]), "kinds in import order, ids increasing");
    }
}
