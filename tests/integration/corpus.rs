//! The reference corpus of real producers' OpenLineage events (`../shared/fixtures/openlineage`,
//! see its README), sent to `POST /api/v1/lineage` as a producer would send it, and the graph
//! each sequence yields checked the way a user would check it.
//!
//! Nothing here names an id or restates the service's answers: a generic catalog builder
//! registers, through GraphQL, one datastore per dataset namespace and one container per dataset
//! with the fields the events mention, and a small model of seed 000's rules ([`Model`]) reads
//! the same events to say what each event's status must be and which container and field edges
//! must then be live or retired. The corpus is always there in CI; without it every case fails
//! and says where it looked (`TRIBUTARY_SHARED_FIXTURES` points elsewhere).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::both_stores;
use crate::common::TestApp;

both_stores!(
    client_full_run_event_01,
    client_job_and_dataset_events_02_03,
    dbt_postgres_run_12,
    spark_column_lineage_sequence_21,
    marquez_large_event_24_gzip_then_plain,
    marquez_required_only_event_25,
    marquez_apples_graph_27_as_one_list,
    whole_corpus_in_one_store,
);

// ---------------------------------------------------------------------------------------------
// The corpus on disk

fn corpus_dir() -> PathBuf {
    let dir = std::env::var_os("TRIBUTARY_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/openlineage"));
    assert!(
        dir.join("README.md").is_file(),
        "the shared OpenLineage corpus is missing: no README.md in {}. CI always has it at \
         ../shared/fixtures/openlineage next to the repository; set TRIBUTARY_SHARED_FIXTURES to the \
         folder if it lives elsewhere",
        dir.display()
    );
    dir
}

/// The number a corpus entry's name starts with (`27_marquez...`, `9_apple_pie.json`, `8.json`).
fn number_prefix(path: &Path) -> u64 {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    name.chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap_or(u64::MAX)
}

fn sorted_by_number(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort_by_key(|p| (number_prefix(p), p.clone()));
    paths
}

/// The request bodies of one corpus entry, in the order a producer sent them: a file is one body
/// (one event or a list), a folder one body per file in the order of their number prefix.
fn entry_files(name: &str) -> Vec<PathBuf> {
    let path = corpus_dir().join(name);
    assert!(path.exists(), "the corpus entry {name} is missing from {}", corpus_dir().display());
    if path.is_file() {
        return vec![path];
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert!(!files.is_empty(), "{} holds no .json file", path.display());
    sorted_by_number(files)
}

fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The events of one body: a list's items, or the single event.
fn events_in(path: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&read_bytes(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match v {
        Value::Array(items) => items,
        one => vec![one],
    }
}

fn entry_events(name: &str) -> Vec<Value> {
    entry_files(name).iter().flat_map(|f| events_in(f)).collect()
}

/// The numbered entries the README's table lists (`| 01_client_full_run_event.json | ...`).
fn readme_entries() -> Vec<String> {
    let text = std::fs::read_to_string(corpus_dir().join("README.md")).expect("README.md");
    text.lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .filter(|cell| cell.starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|cell| cell.split_whitespace().next())
        .map(|cell| cell.trim_end_matches('/').to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// dbt's templates, filled in as the README says

/// The dbt integration tests' matcher for "any value": the run ids of its captured events.
const PLACEHOLDER: &str = "{{ any(result) }}";
const DBT_PRODUCER: &str = "https://github.com/OpenLineage/OpenLineage/tree/1.25.0/integration/dbt";

fn is_template(event: &Value) -> bool {
    event.pointer("/run/runId").and_then(Value::as_str) == Some(PLACEHOLDER)
}

/// A UUID-shaped run id derived from a job's identity: every event of one job shares its run (each
/// dbt job runs once in the capture) and a child's parent run is its parent job's run.
fn run_id_for(job: &Value) -> String {
    let ns = job["namespace"].as_str().unwrap_or_default();
    let name = job["name"].as_str().unwrap_or_default();
    let digest = Sha256::digest(format!("{ns}\u{1f}{name}").as_bytes());
    let h: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-5{}-a{}-{}", &h[0..8], &h[8..12], &h[13..16], &h[17..20], &h[20..32])
}

/// What the producer would have sent: placeholder run ids substituted consistently per job, and
/// the `producer` and `schemaURL` the capture leaves out.
fn patched(mut event: Value) -> Value {
    if !is_template(&event) {
        return event;
    }
    event["run"]["runId"] = json!(run_id_for(&event["job"]));
    if event.pointer("/run/facets/parent/run/runId").and_then(Value::as_str) == Some(PLACEHOLDER) {
        let parent_run = run_id_for(&event["run"]["facets"]["parent"]["job"]);
        event["run"]["facets"]["parent"]["run"]["runId"] = json!(parent_run);
    }
    let obj = event.as_object_mut().expect("an event is an object");
    obj.entry("producer").or_insert(json!(DBT_PRODUCER));
    obj.entry("schemaURL").or_insert(json!("https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"));
    event
}

// ---------------------------------------------------------------------------------------------
// Reading events

fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Every dataset object an event carries: inputs, outputs and a DatasetEvent's `dataset`.
fn datasets(event: &Value) -> Vec<&Value> {
    let mut out: Vec<&Value> = arr(&event["inputs"]).iter().chain(arr(&event["outputs"])).collect();
    if event["dataset"].is_object() {
        out.push(&event["dataset"]);
    }
    out
}

/// The job an event belongs to, as the service keys its evidence.
fn job_key(event: &Value) -> Option<String> {
    if !event["job"].is_object() {
        return None;
    }
    let kind = if event["run"].is_object() { "run" } else { "job" };
    Some(json!([kind, event["job"]["namespace"], event["job"]["name"]]).to_string())
}

/// How a producer spells one namespace: scheme aliases folded, a trailing '/' and case ignored.
fn fold_namespace(ns: &str) -> String {
    let ns = ns.trim().trim_end_matches('/').to_lowercase();
    match ns.strip_prefix("postgresql://") {
        Some(rest) => format!("postgres://{rest}"),
        None => ns,
    }
}

fn dataset_key(ns: &str, name: &str) -> (String, String) {
    (fold_namespace(ns), name.to_lowercase())
}

/// The identity an asset keeps when it is not in the catalog (seed 000's external fqn).
fn external_fqn(ns: &str, name: &str) -> String {
    if ns.ends_with('/') || name.starts_with('/') {
        format!("{ns}{name}")
    } else {
        format!("{ns}/{name}")
    }
}

/// The datastore type a namespace's scheme names; a namespace without a scheme is generic.
fn datastore_type(ns: &str) -> String {
    match ns.split_once(':').map(|(s, _)| s.to_lowercase()) {
        Some(s) if s == "postgres" || s == "postgresql" => "postgresql".into(),
        Some(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()) => s,
        _ => "generic".into(),
    }
}

/// `database.schema.name` of a dataset name: 3+ parts, 2 parts or 1.
fn split_name(name: &str) -> (Option<String>, Option<String>, String) {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.len() {
        0 | 1 => (None, None, name.to_string()),
        2 => (None, Some(parts[0].to_string()), parts[1].to_string()),
        _ => (Some(parts[0].to_string()), Some(parts[1].to_string()), parts[2..].join(".")),
    }
}

// ---------------------------------------------------------------------------------------------
// The catalog builder

/// The containers registered for a set of events, keyed the way the events name them.
#[derive(Default)]
struct Catalog {
    by_dataset: BTreeMap<(String, String), i64>,
    /// Container id → `namespace/name` as the events spell it, for readable comparisons.
    label: BTreeMap<i64, String>,
    /// Container id → its catalog name.
    name: BTreeMap<i64, String>,
    /// (container id, lower-case field name) → field id.
    fields: BTreeMap<(i64, String), i64>,
    /// Field id → (container id, field name).
    field_of: BTreeMap<i64, (i64, String)>,
}

impl Catalog {
    /// One datastore per distinct dataset namespace (listing it in `namespaces`) and one container
    /// per dataset name, with the fields of the `schema` facets and of the column lineage (an
    /// output's field names and the input fields it names).
    async fn build(app: &TestApp, events: &[Value]) -> Catalog {
        // key → (namespace and name as first spelled, field names in first-seen order)
        let mut wanted: BTreeMap<(String, String), (String, String, Vec<String>)> = BTreeMap::new();
        fn note(
            wanted: &mut BTreeMap<(String, String), (String, String, Vec<String>)>,
            ns: &str,
            name: &str,
            field: Option<&str>,
        ) {
            if ns.is_empty() || name.is_empty() {
                return;
            }
            let entry = wanted.entry(dataset_key(ns, name)).or_insert_with(|| (ns.into(), name.into(), Vec::new()));
            if let Some(f) = field.filter(|f| !f.is_empty()) {
                if !entry.2.iter().any(|x| x.eq_ignore_ascii_case(f)) {
                    entry.2.push(f.to_string());
                }
            }
        }
        for event in events {
            for d in datasets(event) {
                let (ns, name) = (text(&d["namespace"]), text(&d["name"]));
                note(&mut wanted, ns, name, None);
                for f in arr(&d["facets"]["schema"]["fields"]) {
                    note(&mut wanted, ns, name, f["name"].as_str());
                }
                let cll = &d["facets"]["columnLineage"];
                if let Some(fields) = cll["fields"].as_object() {
                    for (out_field, spec) in fields {
                        note(&mut wanted, ns, name, Some(out_field));
                        for i in arr(&spec["inputFields"]) {
                            note(&mut wanted, text(&i["namespace"]), text(&i["name"]), i["field"].as_str());
                        }
                    }
                }
                for i in arr(&cll["dataset"]) {
                    note(&mut wanted, text(&i["namespace"]), text(&i["name"]), i["field"].as_str());
                }
            }
        }
        let mut datastores: BTreeMap<String, i64> = BTreeMap::new();
        let mut cat = Catalog::default();
        for (key, (ns, name, fields)) in wanted {
            let ds = match datastores.get(&key.0) {
                Some(id) => *id,
                None => {
                    let d = app
                        .ok(
                            "mutation($i: DatastoreInput!) { upsertDatastore(input: $i) { id } }",
                            json!({"i": {"name": ns, "type": datastore_type(&ns), "namespaces": [ns]}}),
                        )
                        .await;
                    let id = d["upsertDatastore"]["id"].as_i64().expect("datastore id");
                    datastores.insert(key.0.clone(), id);
                    id
                }
            };
            let (database, schema, short) = split_name(&name);
            let fields: Vec<Value> = fields.iter().map(|f| json!({"name": f})).collect();
            let c = app
                .ok(
                    "mutation($i: ContainerInput!) {
                       upsertContainer(input: $i) { id name fields(size: 1000) { items { id name } } } }",
                    json!({"i": {
                        "datastoreId": ds, "database": database, "schema": schema, "name": short, "fields": fields
                    }}),
                )
                .await["upsertContainer"]
                .clone();
            let id = c["id"].as_i64().expect("container id");
            cat.by_dataset.insert(key, id);
            cat.label.insert(id, external_fqn(&ns, &name));
            cat.name.insert(id, text(&c["name"]).to_string());
            for f in arr(&c["fields"]["items"]) {
                let fid = f["id"].as_i64().expect("field id");
                let fname = text(&f["name"]).to_string();
                cat.fields.insert((id, fname.to_lowercase()), fid);
                cat.field_of.insert(fid, (id, fname));
            }
        }
        cat
    }

    fn container(&self, ns: &str, name: &str) -> Option<i64> {
        self.by_dataset.get(&dataset_key(ns, name)).copied()
    }

    /// The container a dataset object resolves to: by its name, else through a symlink.
    fn resolve(&self, d: &Value) -> Option<i64> {
        self.container(text(&d["namespace"]), text(&d["name"])).or_else(|| {
            arr(&d["facets"]["symlinks"]["identifiers"])
                .iter()
                .find_map(|s| self.container(text(&s["namespace"]), text(&s["name"])))
        })
    }

    /// A dataset's end in the graph: its container's label, else its external identity.
    fn end(&self, d: &Value) -> (String, bool) {
        match self.resolve(d) {
            Some(c) => (self.label[&c].clone(), true),
            None => (format!("ext:{}", external_fqn(text(&d["namespace"]), text(&d["name"]))), false),
        }
    }

    fn field(&self, container: i64, name: &str) -> Option<i64> {
        self.fields.get(&(container, name.to_lowercase())).copied()
    }

    fn field_name(&self, field: i64) -> String {
        self.field_of[&field].1.clone()
    }

    /// The container of the dataset `namespace/name` as the events spell it.
    fn id_of(&self, label: &str) -> i64 {
        *self.label.iter().find(|(_, l)| *l == label).unwrap_or_else(|| panic!("{label} is not catalogued")).0
    }
}

// ---------------------------------------------------------------------------------------------
// What the events say: a model of seed 000's rules

/// One lineage relationship, named by the events' own dataset and field names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Link {
    Table { source: String, target: String },
    Column { source: String, source_field: String, target: String, target_field: String },
}

fn table(source: &str, target: &str) -> Link {
    Link::Table { source: source.into(), target: target.into() }
}

/// What one event must give.
#[derive(Debug, Clone)]
struct Outcome {
    status: &'static str,
    /// The JSON pointers a rejection names.
    errors: Vec<String>,
    edges_retired: usize,
    /// A missing `schemaURL` is accepted with a warning at `/schemaURL`.
    schema_url_warning: bool,
}

/// Why seed 000 refuses an event, as JSON pointers: an `eventTime` that is not RFC 3339 with an
/// offset or Z, a missing or relative `producer`, a relative `schemaURL`.
fn rejection(event: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let time_ok = event["eventTime"].as_str().is_some_and(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok());
    if !time_ok {
        out.push("/eventTime".to_string());
    }
    let absolute = |v: &Value| v.as_str().is_some_and(|s| url::Url::parse(s).is_ok());
    if !absolute(&event["producer"]) {
        out.push("/producer".to_string());
    }
    if !event["schemaURL"].is_null() && !absolute(&event["schemaURL"]) {
        out.push("/schemaURL".to_string());
    }
    out
}

/// Whether a field edge's value went through a transformation rather than being copied: a
/// DIRECT/IDENTITY copy is not derived (the filters and joins Spark's legacy mode lists beside it
/// as INDIRECT do not change the value); any other DIRECT transformation, a masking one, or no
/// DIRECT one at all (the input only influences the output) is. No transformation at all says
/// nothing either way: not said (null).
fn expected_derived(input: &Value, output_spec: &Value) -> Option<bool> {
    let mut steps: Vec<(String, String, bool)> = arr(&input["transformations"])
        .iter()
        .map(|t| (text(&t["type"]).to_uppercase(), text(&t["subtype"]).to_uppercase(), t["masking"] == true))
        .collect();
    if steps.is_empty() {
        // 1-0-x: one `transformationType` for the output field.
        if let Some(legacy) = output_spec["transformationType"].as_str() {
            steps.push(("DIRECT".into(), legacy.to_uppercase(), false));
        }
    }
    if steps.is_empty() {
        return None;
    }
    let copy = steps.iter().any(|(k, s, _)| k == "DIRECT" && s == "IDENTITY");
    let changed =
        steps.iter().any(|(k, s, m)| *m || (k == "DIRECT" && s != "IDENTITY") || (k != "DIRECT" && k != "INDIRECT"));
    Some(changed || !copy)
}

/// Evidence one job holds for one relationship.
#[derive(Debug, Clone)]
struct Held {
    run: String,
    first_run: String,
}

/// Seed 000's run states over a sequence of events: START, RUNNING and events without a type add;
/// COMPLETE reconciles the job's runtime lineage with everything its run reported, retiring what
/// the job asserted before and no longer does; FAIL and ABORT retire what their run alone
/// asserted; a JobEvent replaces the job's design-time lineage. An edge is live while some job
/// holds evidence for it. The same event sent twice changes nothing the second time.
struct Model<'a> {
    cat: &'a Catalog,
    held: BTreeMap<String, BTreeMap<Link, Held>>,
    ever: BTreeSet<Link>,
    derived: BTreeMap<Link, Option<bool>>,
    ended_runs: BTreeSet<String>,
    seen: Vec<(Value, Outcome)>,
}

impl<'a> Model<'a> {
    fn new(cat: &'a Catalog) -> Self {
        Model {
            cat,
            held: BTreeMap::new(),
            ever: BTreeSet::new(),
            derived: BTreeMap::new(),
            ended_runs: BTreeSet::new(),
            seen: Vec::new(),
        }
    }

    fn live(&self) -> BTreeSet<Link> {
        self.held.values().flat_map(|m| m.keys().cloned()).collect()
    }

    fn retired(&self) -> BTreeSet<Link> {
        self.ever.difference(&self.live()).cloned().collect()
    }

    fn live_tables(&self) -> BTreeSet<(String, String)> {
        self.live()
            .into_iter()
            .filter_map(|l| match l {
                Link::Table { source, target } => Some((source, target)),
                Link::Column { .. } => None,
            })
            .collect()
    }

    /// Table links (inputs × outputs, a dataset reading itself and two unknown ends being no
    /// edge) and column links (both fields catalogued) of one event.
    fn links(&mut self, event: &Value) -> BTreeSet<Link> {
        let mut out = BTreeSet::new();
        for i in arr(&event["inputs"]) {
            for o in arr(&event["outputs"]) {
                let ((s, s_known), (t, t_known)) = (self.cat.end(i), self.cat.end(o));
                if s != t && (s_known || t_known) {
                    out.insert(Link::Table { source: s, target: t });
                }
            }
        }
        // Column lineage implies table lineage: an input only the column lineage names is a
        // parent of the output too.
        for o in arr(&event["outputs"]) {
            let cll = &o["facets"]["columnLineage"];
            for spec in cll["fields"].as_object().into_iter().flat_map(|f| f.values()) {
                for i in arr(&spec["inputFields"]) {
                    let same = |d: &&Value| d["namespace"] == i["namespace"] && d["name"] == i["name"];
                    if arr(&event["inputs"]).iter().any(|d| same(&d)) {
                        continue;
                    }
                    let named = json!({"namespace": i["namespace"], "name": i["name"]});
                    let ((s, s_known), (t, t_known)) = (self.cat.end(&named), self.cat.end(o));
                    if s != t && (s_known || t_known) {
                        out.insert(Link::Table { source: s, target: t });
                    }
                }
            }
        }
        for o in arr(&event["outputs"]) {
            let cll = &o["facets"]["columnLineage"];
            assert!(
                arr(&cll["dataset"]).is_empty(),
                "dataset-wide column lineage is not modelled here yet: extend Model::links"
            );
            let (Some(fields), Some(oc)) = (cll["fields"].as_object(), self.cat.resolve(o)) else { continue };
            for (out_field, spec) in fields {
                let Some(tf) = self.cat.field(oc, out_field) else { continue };
                for i in arr(&spec["inputFields"]) {
                    let Some(ic) = self.cat.container(text(&i["namespace"]), text(&i["name"])) else { continue };
                    let Some(sf) = self.cat.field(ic, text(&i["field"])) else { continue };
                    if sf == tf {
                        continue;
                    }
                    let link = Link::Column {
                        source: self.cat.label[&ic].clone(),
                        source_field: self.cat.field_name(sf),
                        target: self.cat.label[&oc].clone(),
                        target_field: self.cat.field_name(tf),
                    };
                    // An edge keeps what an earlier event said when a later one says nothing.
                    match expected_derived(i, spec) {
                        Some(d) => {
                            self.derived.insert(link.clone(), Some(d));
                        }
                        None => {
                            self.derived.entry(link.clone()).or_insert(None);
                        }
                    }
                    out.insert(link);
                }
            }
        }
        out
    }

    /// Whether the event carries metadata for a catalogued dataset: a description, owners, tags,
    /// or a catalogued field's type or description in its schema.
    fn has_metadata(&self, event: &Value) -> bool {
        datasets(event).into_iter().any(|d| {
            let Some(c) = self.cat.resolve(d) else { return false };
            let f = &d["facets"];
            f["documentation"]["description"].is_string()
                || f["ownership"]["owners"].is_array()
                || arr(&f["tags"]["tags"])
                    .iter()
                    .any(|t| t["field"].as_str().is_none_or(|name| self.cat.field(c, name).is_some()))
                || arr(&f["schema"]["fields"]).iter().any(|x| {
                    (x["type"].is_string() || x["description"].is_string())
                        && self.cat.field(c, text(&x["name"])).is_some()
                })
        })
    }

    fn apply(&mut self, event: &Value) -> Outcome {
        if let Some((_, first)) = self.seen.iter().find(|(e, _)| e == event) {
            // Sent again: nothing changes; an event refused once is refused again.
            let again = if first.status == "rejected" {
                first.clone()
            } else {
                Outcome { status: "ignored", errors: Vec::new(), edges_retired: 0, schema_url_warning: false }
            };
            return again;
        }
        let outcome = self.apply_new(event);
        self.seen.push((event.clone(), outcome.clone()));
        outcome
    }

    fn apply_new(&mut self, event: &Value) -> Outcome {
        let errors = rejection(event);
        if !errors.is_empty() {
            return Outcome { status: "rejected", errors, edges_retired: 0, schema_url_warning: false };
        }
        for d in datasets(event) {
            let change = d["facets"]["lifecycleStateChange"]["lifecycleStateChange"].as_str().unwrap_or_default();
            assert!(
                change != "DROP" && change != "RENAME",
                "a {change} lifecycle change is not modelled here yet: extend Model::apply"
            );
        }
        let schema_url_warning = event["schemaURL"].is_null();
        let metadata = self.has_metadata(event);
        let before = self.live();
        let mut links = self.links(event);
        let mut evidence_retired = 0;
        // A START or RUNNING of a run that already ended: nothing new, not even its state.
        let mut late = false;
        if let Some(job) = job_key(event) {
            let run = text(&event["run"]["runId"]).to_string();
            let held = self.held.entry(job).or_default();
            let mut keep = |held: &mut BTreeMap<Link, Held>, wanted: &dyn Fn(&Link, &Held) -> bool| {
                let n = held.len();
                held.retain(|l, h| wanted(l, h));
                evidence_retired += n - held.len();
            };
            if !event["run"].is_object() {
                // A JobEvent replaces the job's design-time lineage, unless it reports none.
                if !links.is_empty() {
                    keep(held, &|l, _| links.contains(l));
                }
            } else {
                match event["eventType"].as_str() {
                    Some("FAIL") | Some("ABORT") => {
                        keep(held, &|_, h| h.first_run != run);
                        self.ended_runs.insert(run.clone());
                        links.clear();
                    }
                    Some("COMPLETE") => {
                        let mut combined = links.clone();
                        combined.extend(held.iter().filter(|(_, h)| h.run == run).map(|(l, _)| l.clone()));
                        if !combined.is_empty() {
                            keep(held, &|l, _| combined.contains(l));
                        }
                    }
                    _ if self.ended_runs.contains(&run) => {
                        links.clear();
                        late = true;
                    }
                    _ => {}
                }
            }
            for l in &links {
                let first_run = held.get(l).map(|h| h.first_run.clone()).unwrap_or_else(|| run.clone());
                held.insert(l.clone(), Held { run: run.clone(), first_run });
            }
            self.ever.extend(links.iter().cloned());
        }
        let after = self.live();
        let changed = !links.is_empty() || evidence_retired > 0 || metadata;
        // A RunEvent with a type records its run's state even when it changes no lineage.
        let records_run = event["run"].is_object() && event["eventType"].is_string() && !late;
        Outcome {
            status: match (changed, records_run) {
                (true, _) => "applied",
                (false, true) => "recorded",
                (false, false) => "ignored",
            },
            errors: Vec::new(),
            edges_retired: before.difference(&after).count(),
            schema_url_warning,
        }
    }

    /// The metadata the events assert, latest value first wins: (container, field, attribute) →
    /// value, from documentation descriptions and schema field types and descriptions.
    fn metadata(&self, events: &[Value]) -> BTreeMap<(i64, Option<i64>, String), Value> {
        let mut out = BTreeMap::new();
        for event in events.iter().filter(|e| rejection(e).is_empty()) {
            for d in datasets(event) {
                let Some(c) = self.cat.resolve(d) else { continue };
                let f = &d["facets"];
                if let Some(desc) = f["documentation"]["description"].as_str() {
                    out.insert((c, None, "description".to_string()), json!(desc));
                }
                for x in arr(&f["schema"]["fields"]) {
                    let Some(fid) = self.cat.field(c, text(&x["name"])) else { continue };
                    if let Some(t) = x["type"].as_str() {
                        out.insert((c, Some(fid), "type".to_string()), json!(t));
                    }
                    if let Some(desc) = x["description"].as_str() {
                        out.insert((c, Some(fid), "description".to_string()), json!(desc));
                    }
                }
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Talking to the service

const INGEST: &str = "/api/v1/lineage";

/// Posts one body; returns the HTTP status and the report (a refused single event's report is
/// under `detail`).
async fn ingest(app: &TestApp, body: Vec<u8>, gzip: bool) -> (u16, Value) {
    let (status, answer) = app.post_raw(INGEST, body, gzip).await;
    assert_ne!(status, 500, "the service failed an event: {answer:#}");
    let report = if answer["detail"].is_object() { answer["detail"].clone() } else { answer };
    (status, report)
}

fn to_body(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("serialise")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("gzip");
    enc.finish().expect("gzip")
}

/// The HTTP status seed 000 gives a single event's outcome.
fn http_status(outcome: &Outcome) -> u16 {
    match outcome.status {
        "applied" | "recorded" | "ignored" => 201,
        "rejected" => 422,
        _ => 500,
    }
}

/// Compares a report with the outcomes the model gives its events, event by event.
fn check_report(what: &str, report: &Value, expected: &[Outcome]) {
    let events = arr(&report["events"]);
    assert_eq!(events.len(), expected.len(), "{what}: one report per event: {report:#}");
    assert_eq!(report["received"], expected.len(), "{what}");
    for status in ["applied", "recorded", "ignored", "rejected", "failed"] {
        let n = expected.iter().filter(|o| o.status == status).count();
        assert_eq!(report[status], n, "{what}: {status} count");
    }
    for (i, (got, want)) in events.iter().zip(expected).enumerate() {
        assert_eq!(got["index"], i, "{what}: event {i}");
        assert!(got["id"].is_i64(), "{what}: event {i} is stored: {got:#}");
        assert_eq!(got["status"], want.status, "{what}: event {i}: {got:#}");
        let locations: Vec<&str> = arr(&got["errors"]).iter().map(|e| text(&e["location"])).collect();
        assert_eq!(locations, want.errors, "{what}: event {i} error locations: {got:#}");
        if want.status == "applied" {
            assert_eq!(got["summary"]["edges_retired"], want.edges_retired, "{what}: event {i} retirements: {got:#}");
            let warned = arr(&got["summary"]["warnings"]).iter().any(|w| w["location"] == "/schemaURL");
            assert_eq!(warned, want.schema_url_warning, "{what}: event {i}: a missing schemaURL is a warning: {got:#}");
        }
    }
}

/// Sends each body in turn, as separate requests, checking each answer against the model.
async fn send_each(app: &TestApp, model: &mut Model<'_>, what: &str, bodies: Vec<Value>) -> Vec<Value> {
    let mut reports = Vec::new();
    for (n, body) in bodies.into_iter().enumerate() {
        let events = match &body {
            Value::Array(items) => items.clone(),
            one => vec![one.clone()],
        };
        let expected: Vec<Outcome> = events.iter().map(|e| model.apply(e)).collect();
        let (status, report) = ingest(app, to_body(&body), false).await;
        let want = if body.is_array() { 201 } else { http_status(&expected[0]) };
        assert_eq!(status, want, "{what}, body {n}: {report:#}");
        check_report(&format!("{what}, body {n}"), &report, &expected);
        reports.push(report);
    }
    reports
}

const EDGES: &str = "query($r: Boolean) { edges(includeRetired: $r, size: 1000) { total items {
  id sourceContainerId targetContainerId sourceFieldId targetFieldId sourceExternalFqn targetExternalFqn
  sourceType operation derived transformations retiredAt sourceContainer { name } targetContainer { name }
  evidence { evidenceType details retiredAt } } } }";

/// The edges the service holds, named like the model's links.
struct Graph {
    live: BTreeSet<Link>,
    retired: BTreeSet<Link>,
    derived: BTreeMap<Link, Option<bool>>,
    items: Vec<(Link, Value)>,
}

async fn graph(app: &TestApp, cat: &Catalog) -> Graph {
    let named = |e: &Value, side: &str| -> String {
        match e[format!("{side}ContainerId")].as_i64() {
            Some(id) => {
                let name = &e[format!("{side}Container")]["name"];
                assert_eq!(name, cat.name[&id].as_str(), "the {side} container's name: {e:#}");
                cat.label.get(&id).cloned().unwrap_or_else(|| panic!("container {id} was not catalogued here"))
            }
            None => format!("ext:{}", text(&e[format!("{side}ExternalFqn")])),
        }
    };
    let link = |e: &Value| -> Link {
        match (e["sourceFieldId"].as_i64(), e["targetFieldId"].as_i64()) {
            (Some(s), Some(t)) => {
                let (sc, sf) = cat.field_of[&s].clone();
                let (tc, tf) = cat.field_of[&t].clone();
                Link::Column {
                    source: cat.label[&sc].clone(),
                    source_field: sf,
                    target: cat.label[&tc].clone(),
                    target_field: tf,
                }
            }
            _ => Link::Table { source: named(e, "source"), target: named(e, "target") },
        }
    };
    let all = app.ok(EDGES, json!({"r": true})).await["edges"].clone();
    assert!(all["total"].as_i64().is_some_and(|n| n <= 1000), "more edges than one page: {}", all["total"]);
    let mut g = Graph { live: BTreeSet::new(), retired: BTreeSet::new(), derived: BTreeMap::new(), items: Vec::new() };
    for e in arr(&all["items"]) {
        assert_eq!(e["sourceType"], "openlineage", "{e:#}");
        let l = link(e);
        if e["retiredAt"].is_null() {
            g.derived.insert(l.clone(), e["derived"].as_bool());
            g.live.insert(l.clone());
        } else {
            g.retired.insert(l.clone());
        }
        g.items.push((l, e.clone()));
    }
    let live_only = app.ok(EDGES, json!({"r": false})).await["edges"]["items"].clone();
    let listed: BTreeSet<Link> = arr(&live_only).iter().map(link).collect();
    assert_eq!(listed, g.live, "edges without includeRetired lists exactly the live ones");
    g
}

/// The graph the service holds is the one the model derives from the events.
async fn check_graph(app: &TestApp, cat: &Catalog, model: &Model<'_>, what: &str) -> Graph {
    let g = graph(app, cat).await;
    assert_eq!(g.live, model.live(), "{what}: live edges");
    assert_eq!(g.retired, model.retired(), "{what}: retired edges (includeRetired: true, retiredAt set)");
    for (l, want) in &model.derived {
        if g.live.contains(l) {
            assert_eq!(g.derived.get(l), Some(want), "{what}: derived of {l:?}");
        }
    }
    g
}

const GRAPH: &str = "query($c: Int!, $d: Int, $s: Side) { lineageGraph(containerId: $c, depth: $d, side: $s) {
  nodes { id name } edges { sourceContainerId targetContainerId sourceFieldId } externalNodes { fqn } } }";

/// `lineageGraph` on one side of a container: the nodes within `depth` hops and the edges on
/// their paths, as the model's live table links give them. Returns the names of the nodes.
async fn check_side(
    app: &TestApp,
    cat: &Catalog,
    model: &Model<'_>,
    centre: i64,
    depth: usize,
    side: &str,
) -> BTreeSet<String> {
    let links = model.live_tables();
    let start = cat.label[&centre].clone();
    let mut dist: BTreeMap<String, usize> = BTreeMap::from([(start.clone(), 0)]);
    let mut frontier = vec![start];
    for d in 1..=depth {
        let mut next = Vec::new();
        for node in &frontier {
            for (s, t) in &links {
                let (from, to) = if side == "UPSTREAM" { (t, s) } else { (s, t) };
                if from == node && !dist.contains_key(to) {
                    dist.insert(to.clone(), d);
                    next.push(to.clone());
                }
            }
        }
        frontier = next;
    }
    let want_edges: BTreeSet<(String, String)> = links
        .iter()
        .filter(|(s, t)| {
            let near = if side == "UPSTREAM" { t } else { s };
            dist.get(near).is_some_and(|d| *d < depth) && dist.contains_key(if side == "UPSTREAM" { s } else { t })
        })
        .cloned()
        .collect();
    let g = app.ok(GRAPH, json!({"c": centre, "d": depth, "s": side})).await["lineageGraph"].clone();
    let mut nodes: BTreeSet<String> =
        arr(&g["nodes"]).iter().map(|n| cat.label[&n["id"].as_i64().expect("node id")].clone()).collect();
    nodes.extend(arr(&g["externalNodes"]).iter().map(|n| format!("ext:{}", text(&n["fqn"]))));
    let edges: BTreeSet<(String, String)> = arr(&g["edges"])
        .iter()
        .filter(|e| e["sourceFieldId"].is_null())
        .map(|e| {
            let id = |k: &str| cat.label[&e[k].as_i64().expect("container edge")].clone();
            (id("sourceContainerId"), id("targetContainerId"))
        })
        .collect();
    let what = format!("lineageGraph {side} depth {depth} of {}", cat.label[&centre]);
    assert_eq!(nodes, dist.keys().cloned().collect::<BTreeSet<_>>(), "{what}: nodes");
    assert_eq!(edges, want_edges, "{what}: edges");
    arr(&g["nodes"]).iter().filter(|n| n["id"] != centre).map(|n| text(&n["name"]).to_string()).collect()
}

/// The metadata the events assert is what `metadataAssertions` lists from OpenLineage.
async fn check_metadata(app: &TestApp, model: &Model<'_>, events: &[Value], what: &str) {
    let want = model.metadata(events);
    let containers: BTreeSet<i64> = want.keys().map(|k| k.0).collect();
    let mut missing = Vec::new();
    for c in containers {
        let rows = app
            .ok(
                "query($c: Int!) {
                   metadataAssertions(containerId: $c) { containerId fieldId attribute source value } }",
                json!({"c": c}),
            )
            .await["metadataAssertions"]
            .clone();
        for ((_, field, attribute), value) in want.iter().filter(|(k, _)| k.0 == c) {
            let found = arr(&rows).iter().any(|r| {
                r["source"] == "openlineage"
                    && r["fieldId"].as_i64() == *field
                    && r["attribute"] == attribute.as_str()
                    && &r["value"] == value
            });
            if !found {
                let asset = match field {
                    Some(f) => format!("{} field {}", model.cat.label[&c], model.cat.field_name(*f)),
                    None => model.cat.label[&c].clone(),
                };
                let mut shown = value.to_string();
                if shown.len() > 80 {
                    shown = format!("{}...", shown.chars().take(77).collect::<String>());
                }
                missing.push(format!("{asset}: {attribute} {shown}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{what}: {} metadata value(s) the events assert are not in metadataAssertions from OpenLineage:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

fn names(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// The cases

/// 01: a schema-complete COMPLETE event (parent, nominalTime, run tags, job documentation, input
/// and output facets) is applied as sent; its dataset reads itself, which is no edge.
async fn client_full_run_event_01(app: TestApp) {
    let name = "01_client_full_run_event.json";
    let events = entry_events(name);
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    let expected = model.apply(&events[0]);
    assert_eq!(expected.status, "applied", "the model reads 01 as applied (schema metadata of a catalogued table)");
    let (status, report) = ingest(&app, read_bytes(&entry_files(name)[0]), false).await;
    assert_eq!(status, 201, "{report:#}");
    check_report(name, &report, &[expected]);
    assert_eq!(report["events"][0]["event_kind"], "run_event");
    let g = check_graph(&app, &cat, &model, name).await;
    assert!(g.live.is_empty() && g.retired.is_empty(), "a dataset that reads itself is no edge");
    check_metadata(&app, &model, &events, name).await;
}

/// 02 and 03 carry an `eventTime` without a timezone: both are refused at `/eventTime` (and again
/// when sent again); with the time read as UTC, the JobEvent gives design-time lineage and the
/// DatasetEvent only metadata.
async fn client_job_and_dataset_events_02_03(app: TestApp) {
    let files = ["02_client_job_event.json", "03_client_dataset_event.json"];
    let sent: Vec<Value> = files.iter().flat_map(|f| entry_events(f)).collect();
    let fixed: Vec<Value> = sent
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e["eventTime"] = json!(format!("{}Z", text(&e["eventTime"])));
            e
        })
        .collect();
    let cat = Catalog::build(&app, &sent).await;
    let mut model = Model::new(&cat);
    for (file, event) in files.iter().zip(&sent) {
        let expected = model.apply(event);
        assert_eq!(expected.errors, vec!["/eventTime"], "{file}: the model refuses it for its time alone");
        let (status, report) = ingest(&app, read_bytes(&entry_files(file)[0]), false).await;
        assert_eq!(status, 422, "{file}: {report:#}");
        check_report(file, &report, &[expected]);
    }
    let stored = app.ok("{ openLineageEvents(status: \"rejected\") { total items { kind } } }", json!({})).await;
    assert_eq!(stored["openLineageEvents"]["total"], 2, "refused events are stored for the record: {stored:#}");
    assert!(graph(&app, &cat).await.items.is_empty(), "refused events apply nothing");
    send_each(&app, &mut model, "02 and 03 with a UTC time", fixed.clone()).await;
    let g = check_graph(&app, &cat, &model, "02 and 03 with a UTC time").await;
    let input = cat.end(&fixed[0]["inputs"][0]).0;
    let output = cat.end(&fixed[0]["outputs"][0]).0;
    assert_eq!(g.live, BTreeSet::from([table(&input, &output)]), "the JobEvent's input feeds its output");
    let (_, edge) = &g.items[0];
    assert_eq!(edge["operation"], "job_event");
    assert_eq!(edge["evidence"][0]["evidenceType"], "job_event");
    check_metadata(&app, &model, &fixed, "02 and 03 with a UTC time").await;
    // A client retrying a refused event is refused again, not told 201.
    send_each(&app, &mut model, "02 as captured, sent again", vec![sent[0].clone()]).await;
}

/// 12: 72 dbt events (run → model → query jobs), with run ids and producer filled in as the README
/// says, sent as one list: the models' lineage through postgres `db.schema.table` names.
async fn dbt_postgres_run_12(app: TestApp) {
    let name = "12_dbt_postgres_run_72events.json";
    let captured = entry_events(name);
    let events: Vec<Value> = captured.iter().cloned().map(patched).collect();
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    // As captured, an event lacks only its producer (its run id is no UUID: a warning).
    let with_lineage = captured.iter().find(|e| !arr(&e["outputs"]).is_empty()).expect("an event with outputs");
    let refused = model.apply(with_lineage);
    assert_eq!(refused.errors, vec!["/producer"]);
    let (status, report) = ingest(&app, to_body(with_lineage), false).await;
    assert_eq!(status, 422, "{report:#}");
    check_report("12 as captured", &report, &[refused]);
    // Patched, as one list.
    send_each(&app, &mut model, name, vec![Value::Array(events.clone())]).await;
    check_graph(&app, &cat, &model, name).await;
    // Every model's upstream, two hops back.
    let mut models: Vec<&Value> = events
        .iter()
        .filter(|e| e["eventType"] == "COMPLETE" && !arr(&e["inputs"]).is_empty() && !arr(&e["outputs"]).is_empty())
        .collect();
    assert!(!models.is_empty(), "12 has model runs");
    for m in &models {
        let target = cat.resolve(&m["outputs"][0]).expect("catalogued");
        check_side(&app, &cat, &model, target, 2, "UPSTREAM").await;
    }
    // What a user looks for: customers comes from the three staging models, and they from raw tables.
    let customers = cat.id_of("postgres://postgres:5432/postgres.public.customers");
    let up1 = check_side(&app, &cat, &model, customers, 1, "UPSTREAM").await;
    assert_eq!(up1, names(&["stg_customers", "stg_orders", "stg_payments"]));
    let up2 = check_side(&app, &cat, &model, customers, 2, "UPSTREAM").await;
    assert!(up2.is_superset(&names(&["raw_customers", "raw_orders", "raw_payments"])), "{up2:?}");
    // Each model edge's evidence names the model's run and its parent, the dbt run.
    models.sort_by_key(|m| text(&m["job"]["name"]).to_string());
    for m in models {
        let target = cat.resolve(&m["outputs"][0]).expect("catalogued");
        let edges = app
            .ok(
                "query($c: Int!) { edges(containerId: $c, size: 1000) {
                   items { targetContainerId sourceFieldId evidence { details } } } }",
                json!({"c": target}),
            )
            .await["edges"]["items"]
            .clone();
        let incoming: Vec<&Value> =
            arr(&edges).iter().filter(|e| e["targetContainerId"] == target && e["sourceFieldId"].is_null()).collect();
        assert_eq!(incoming.len(), arr(&m["inputs"]).len(), "{}: one edge per input", m["job"]["name"]);
        let parent = &m["run"]["facets"]["parent"];
        for e in incoming {
            let d = &e["evidence"][0]["details"];
            assert_eq!(d["job"], json!({"namespace": m["job"]["namespace"], "name": m["job"]["name"]}));
            assert_eq!(d["runId"], m["run"]["runId"]);
            assert_eq!(d["runState"], "COMPLETE");
            assert_eq!(
                d["parent"],
                json!({
                    "runId": parent["run"]["runId"],
                    "job": {"namespace": parent["job"]["namespace"], "name": parent["job"]["name"]}
                })
            );
        }
    }
    // dbt documents its models and their columns (descriptions without types): they are the
    // tables' and the fields' descriptions from OpenLineage.
    check_metadata(&app, &model, &events, name).await;
}

/// 21: a real Spark 1.19 capture, one event per request in file order: two CREATE TABLEs, then a
/// CTAS whose legacy-mode column lineage gives field edges, `derived` per transformation.
async fn spark_column_lineage_sequence_21(app: TestApp) {
    let name = "21_compat_spark_cll_sequence";
    let events = entry_events(name);
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    send_each(&app, &mut model, name, events.clone()).await;
    let g = check_graph(&app, &cat, &model, name).await;
    // The CTAS: the completed event whose output carries column lineage.
    let ctas = events
        .iter()
        .rev()
        .find(|e| {
            e["eventType"] == "COMPLETE" && arr(&e["outputs"]).iter().any(|o| o["facets"]["columnLineage"].is_object())
        })
        .expect("a completed CTAS with column lineage");
    let output = &ctas["outputs"][0];
    let table_id = cat.resolve(output).expect("catalogued");
    let upstream = check_side(&app, &cat, &model, table_id, 1, "UPSTREAM").await;
    let inputs: BTreeSet<String> =
        arr(&ctas["inputs"]).iter().map(|i| cat.name[&cat.resolve(i).expect("catalogued")].clone()).collect();
    assert_eq!(upstream, inputs, "the CTAS output's upstream tables are its inputs");
    assert_eq!(upstream, names(&["/tmp/cll_test/cll_source1", "/tmp/cll_test/cll_source2"]));
    // One field edge per (output column, input column) of its column lineage.
    let target = cat.end(output).0;
    let mut want = 0;
    for (out_field, spec) in output["facets"]["columnLineage"]["fields"].as_object().expect("fields") {
        for i in arr(&spec["inputFields"]) {
            want += 1;
            let link = Link::Column {
                source: cat.label[&cat.container(text(&i["namespace"]), text(&i["name"])).expect("catalogued")].clone(),
                source_field: text(&i["field"]).to_string(),
                target: target.clone(),
                target_field: out_field.clone(),
            };
            assert!(g.live.contains(&link), "{link:?} is a live field edge");
            assert_eq!(g.derived.get(&link), Some(&expected_derived(i, spec)), "derived of {link:?}");
            let (_, edge) = g.items.iter().find(|(l, _)| *l == link).expect("listed");
            let steps = |v: &Value| -> Vec<(String, String, bool)> {
                arr(v)
                    .iter()
                    .map(|t| (text(&t["type"]).to_string(), text(&t["subtype"]).to_string(), t["masking"] == true))
                    .collect()
            };
            assert_eq!(
                steps(&edge["transformations"]),
                steps(&i["transformations"]),
                "{link:?} keeps its transformations as sent"
            );
            assert!(edge["evidence"][0]["details"]["sql"].is_null(), "field evidence carries no SQL");
        }
    }
    let columns: Vec<&Link> = g.live.iter().filter(|l| matches!(l, Link::Column { .. })).collect();
    assert_eq!(columns.len(), want, "no other field edges");
    // Only the identity copy of cll_source1.a into ident is not derived.
    let copies: Vec<Link> =
        columns.iter().filter(|l| g.derived.get(**l) == Some(&Some(false))).map(|l| (*l).clone()).collect();
    assert_eq!(
        copies,
        vec![Link::Column {
            source: "file/tmp/cll_test/cll_source1".into(),
            source_field: "a".into(),
            target: "file/tmp/cll_test/tbl1".into(),
            target_field: "ident".into()
        }]
    );
    // The table edges name the Spark application as the parent run.
    let parent = &ctas["run"]["facets"]["parent"];
    for (l, e) in g.items.iter().filter(|(l, _)| matches!(l, Link::Table { .. })) {
        let d = &e["evidence"][0]["details"];
        assert_eq!(d["parent"]["job"]["name"], parent["job"]["name"], "{l:?}");
        assert_eq!(d["parent"]["runId"], parent["run"]["runId"], "{l:?}");
        assert_eq!(d["runState"], "COMPLETE", "{l:?}");
    }
    check_metadata(&app, &model, &events, name).await;
}

/// 24: a 220 KB event (60 KB parent facet, 92 KB custom dataset facet), sent gzip-compressed, is
/// applied and stored whole; the same event sent plain is recognised and changes nothing.
async fn marquez_large_event_24_gzip_then_plain(app: TestApp) {
    let name = "24_marquez_event_large_220KB.json";
    let bytes = read_bytes(&entry_files(name)[0]);
    let events = entry_events(name);
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    let first = model.apply(&events[0]);
    let compressed = gzip(&bytes);
    assert!(compressed.len() < bytes.len(), "gzip shrinks the {} bytes", bytes.len());
    let (status, report) = ingest(&app, compressed, true).await;
    assert_eq!(status, 201, "{report:#}");
    check_report(&format!("{name} gzip"), &report, &[first]);
    let id = report["events"][0]["id"].clone();
    let stored = app
        .ok(
            "query($r: String) { openLineageEvents(runId: $r) { total items { id status body } } }",
            json!({"r": events[0]["run"]["runId"]}),
        )
        .await["openLineageEvents"]
        .clone();
    assert_eq!(stored["total"], 1);
    assert_eq!(stored["items"][0]["id"], id);
    assert!(stored["items"][0]["body"] == events[0], "the stored body is the event as sent, unknown facets included");
    let again = model.apply(&events[0]);
    let (status, report) = ingest(&app, bytes, false).await;
    assert_eq!(status, 201, "{report:#}");
    check_report(&format!("{name} plain"), &report, &[again]);
    assert_eq!(report["events"][0]["id"], id, "the same stored event");
    assert_eq!(report["events"][0]["summary"]["duplicate_of"], id);
    let g = check_graph(&app, &cat, &model, name).await;
    assert!(g.items.is_empty(), "its dataset reads itself: no edge");
    check_metadata(&app, &model, &events, name).await;
}

/// 25: only the required properties (no eventType, no datasets, the 1-0-1 schema URL): valid,
/// nothing to apply, answered 201 and stored as ignored.
async fn marquez_required_only_event_25(app: TestApp) {
    let name = "25_marquez_event_required_only.json";
    let events = entry_events(name);
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    let expected = model.apply(&events[0]);
    assert_eq!(expected.status, "ignored");
    let (status, report) = ingest(&app, read_bytes(&entry_files(name)[0]), false).await;
    assert_eq!(status, 201, "{report:#}");
    check_report(name, &report, &[expected]);
    let stored = app
        .ok(
            "query($r: String) { openLineageEvents(runId: $r) { items { status kind eventType jobName } } }",
            json!({"r": events[0]["run"]["runId"]}),
        )
        .await;
    assert_eq!(
        stored["openLineageEvents"]["items"],
        json!([{"status": "ignored", "kind": "run_event", "eventType": null, "jobName": events[0]["job"]["name"]}])
    );
    assert!(check_graph(&app, &cat, &model, name).await.items.is_empty());
}

/// 27: Marquez's apples, the whole folder as one list: a multi-hop graph where gather_apples
/// changes its input between runs, so its COMPLETE retires the old input's edge.
async fn marquez_apples_graph_27_as_one_list(app: TestApp) {
    let name = "27_marquez_apples_graph";
    let events = entry_events(name);
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    let reports = send_each(&app, &mut model, name, vec![Value::Array(events.clone())]).await;
    let retirements: i64 =
        arr(&reports[0]["events"]).iter().filter_map(|e| e["summary"]["edges_retired"].as_i64()).sum();
    assert_eq!(retirements, 1, "one edge is retired along the way");
    let g = check_graph(&app, &cat, &model, name).await;
    // What a user sees: red.delicious no longer feeds apples; crab.apples does.
    let old = table("laurents-orchard/red.delicious", "grandmas.kitchen/apples");
    let new = table("backyard/crab.apples", "grandmas.kitchen/apples");
    assert!(g.retired.contains(&old) && !g.live.contains(&old), "{:?}", g.retired);
    assert!(g.live.contains(&new));
    let (_, edge) = g.items.iter().find(|(l, _)| *l == old).expect("the retired edge is listed with includeRetired");
    assert!(edge["retiredAt"].is_string(), "{edge:#}");
    assert!(edge["evidence"][0]["retiredAt"].is_string(), "{edge:#}");
    // The pie's ancestry, three hops back, and what the apples feed.
    let pie = cat.id_of("grandmas.kitchen/apple.pie");
    let up = check_side(&app, &cat, &model, pie, 3, "UPSTREAM").await;
    assert!(up.contains("apples") && !up.contains("delicious"), "{up:?}");
    let apples = cat.id_of("grandmas.kitchen/apples");
    check_side(&app, &cat, &model, apples, 2, "DOWNSTREAM").await;
    check_side(&app, &cat, &model, apples, 1, "UPSTREAM").await;
}

/// Every entry of the corpus into one store, in the README's order, each body as its producer
/// sent it (dbt's patched): the union graph, and no event failed.
async fn whole_corpus_in_one_store(app: TestApp) {
    let dir = corpus_dir();
    let listed = readme_entries();
    assert!(listed.len() >= 8, "the README lists the corpus: {listed:?}");
    for entry in &listed {
        assert!(dir.join(entry).exists(), "the README lists {entry}, which is missing from {}", dir.display());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries = sorted_by_number(entries);
    let mut bodies: Vec<(String, Value)> = Vec::new();
    for entry in &entries {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        for file in entry_files(&name) {
            let v: Value = serde_json::from_slice(&read_bytes(&file)).expect("JSON");
            let v = match v {
                Value::Array(items) => Value::Array(items.into_iter().map(patched).collect()),
                one => patched(one),
            };
            bodies.push((file.display().to_string(), v));
        }
    }
    let events: Vec<Value> = bodies
        .iter()
        .flat_map(|(_, b)| match b {
            Value::Array(items) => items.clone(),
            one => vec![one.clone()],
        })
        .collect();
    assert!(events.len() >= 5 + 72 + 9 + 8, "the whole corpus: {} events", events.len());
    let cat = Catalog::build(&app, &events).await;
    let mut model = Model::new(&cat);
    for (file, body) in bodies {
        send_each(&app, &mut model, &file, vec![body]).await;
    }
    check_graph(&app, &cat, &model, "the whole corpus").await;
    let failed = app.ok("{ openLineageEvents(status: \"failed\") { total } }", json!({})).await;
    assert_eq!(failed["openLineageEvents"]["total"], 0);
    check_metadata(&app, &model, &events, "the whole corpus").await;
}
