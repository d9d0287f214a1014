//! Applying OpenLineage events: one code path behind the four ingest endpoints and the GraphQL
//! mutation. Each event is stored before it is applied, resolved against the catalog, turned
//! into an `AssertionBatch` by the run-state rules, and applied in one transaction.
//!
//! Run states (seed 000 "Run States"): START, RUNNING and OTHER add; COMPLETE reconciles the
//! job's runtime lineage with everything its run reported (this event and earlier events of the
//! same run), retiring what the job asserted before and no longer does; FAIL and ABORT retire
//! what their run alone asserted; a JobEvent replaces the job's design-time lineage. Evidence is
//! one row per (edge, job and kind), so an edge retires only when no job asserts it any more.
//! Empty inputs or outputs mean "not reported": a run that reported no edge retires nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde_json::{json, Value};

use super::{Caller, Lineage};
use crate::auth::Permission;
use crate::domain::{
    Assertion, AssertionBatch, AssertionSummary, Container, Datastore, End, Evidence, Id, NewEdge, StoredEvent,
};
use crate::error::{Error, Result};
use crate::ingest::openlineage::{self as ol, Event, EventKind, Limits, RunState};
use crate::store::{PriorEvidence, Store};

pub const SOURCE_TYPE: &str = "openlineage";

/// What happened to one event.
#[derive(Debug, Clone)]
pub struct EventReport {
    pub index: usize,
    pub id: Option<Id>,
    /// `applied`, `ignored`, `rejected`, `failed` or `denied`.
    pub status: &'static str,
    pub kind: Option<&'static str>,
    /// `[{location, message}]`.
    pub errors: Vec<(String, String)>,
    pub summary: Value,
    pub unresolved: Vec<Unresolved>,
    pub edges_created: i64,
}

/// A dataset that did not resolve to a catalog container (seed 002's reason codes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unresolved {
    pub namespace: String,
    pub name: String,
    pub reason: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, Default)]
pub struct IngestReport {
    pub events: Vec<EventReport>,
}

impl IngestReport {
    pub fn count(&self, status: &str) -> usize {
        self.events.iter().filter(|e| e.status == status).count()
    }
}

impl EventReport {
    fn new(index: usize) -> Self {
        EventReport {
            index,
            id: None,
            status: "failed",
            kind: None,
            errors: Vec::new(),
            summary: json!({}),
            unresolved: Vec::new(),
            edges_created: 0,
        }
    }
}

/// What a request (or a replay batch) has applied but not yet recorded on the stored events.
#[derive(Default)]
struct Pending {
    outcomes: Vec<crate::domain::EventOutcome>,
    /// Runs whose FAIL or ABORT was taken in this batch: a later START of them is ignored,
    /// as the store's applied events would say once the outcomes are recorded.
    failed_runs: HashSet<String>,
    /// The datastores, read once per request: resolution reads them for every event.
    datastores: Option<Vec<Datastore>>,
    /// What the resolver learnt, handed from event to event.
    known: Known,
}

/// What resolution learns that holds for a whole batch of events: a batch's events name the
/// same datasets and fields over and over, and within a store session no other writer can add
/// a container or field meanwhile (the batch's own creations update it).
#[derive(Default)]
struct Known {
    /// Datasets resolved so far.
    resolved: HashMap<(String, String), Resolution>,
    /// Field ids by lowercased name, per container.
    fields: HashMap<Id, HashMap<String, Id>>,
    /// The datastore of each container read or created.
    datastores: HashMap<Id, Id>,
}

impl Pending {
    fn finish(&mut self, rep: &EventReport, event: Option<&Event>) {
        let Some(id) = rep.id else { return };
        if let Some(e) = event {
            if matches!(rep.status, "applied" | "ignored")
                && e.kind == EventKind::Run
                && matches!(e.event_type, Some(RunState::Fail) | Some(RunState::Abort))
            {
                self.failed_runs.extend(e.run_id.clone());
            }
        }
        let errors: Vec<Value> = rep.errors.iter().map(|(l, m)| json!({"location": l, "message": m})).collect();
        self.outcomes.push(crate::domain::EventOutcome {
            id,
            status: rep.status.to_string(),
            errors: Value::Array(errors),
            summary: rep.summary.clone(),
        });
    }

    async fn datastores(&mut self, lineage: &Lineage) -> Result<Vec<Datastore>> {
        if self.datastores.is_none() {
            self.datastores = Some(lineage.store.list_datastores().await?);
        }
        Ok(self.datastores.clone().unwrap_or_default())
    }
}

/// The event as the store keeps it, before it is applied.
fn stored_event(
    caller: &Caller,
    raw: Value,
    validated: &std::result::Result<Event, Vec<ol::ValidationIssue>>,
    now: crate::domain::Timestamp,
) -> StoredEvent {
    let e = validated.as_ref().ok();
    let job = e.and_then(|e| e.job.as_ref());
    StoredEvent {
        id: 0,
        fingerprint: ol::event_fingerprint(&raw),
        kind: e.map(|e| kind_name(e.kind)).unwrap_or("unknown").to_string(),
        job_namespace: job.map(|j| j.namespace.clone()),
        job_name: job.map(|j| j.name.clone()),
        run_id: e.and_then(|e| e.run_id.clone()),
        event_type: e.and_then(|e| e.event_type).map(|s| state_name(Some(s)).to_string()),
        event_time: e.map(|e| e.event_time),
        received_at: now,
        submitted_by: Some(caller.user.clone()),
        status: "pending".into(),
        errors: json!([]),
        summary: json!({}),
        body: raw,
    }
}

/// A stored event's `[{location, message}]` errors as pairs.
fn stored_errors(errors: &Value) -> Vec<(String, String)> {
    errors
        .as_array()
        .map(|errs| {
            errs.iter()
                .map(|e| {
                    let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                    (text("location"), text("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn kind_name(kind: EventKind) -> &'static str {
    kind.as_str()
}

/// The event type that set the evidence; an event without one counts as OTHER.
fn state_name(state: Option<RunState>) -> &'static str {
    state.map(RunState::as_str).unwrap_or("OTHER")
}

/// The namespace as written, with the spellings of one scheme folded together.
fn normalize_namespace(ns: &str) -> String {
    let ns = ns.trim().trim_end_matches('/').to_lowercase();
    for (alias, canonical) in [("postgresql://", "postgres://"), ("s3a://", "s3://"), ("s3n://", "s3://")] {
        if let Some(rest) = ns.strip_prefix(alias) {
            return format!("{canonical}{rest}");
        }
    }
    ns
}

/// An asset that is not in the catalog keeps its OpenLineage identity as its fqn.
pub fn external_fqn(namespace: &str, name: &str) -> String {
    if namespace.ends_with('/') || name.starts_with('/') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

/// Events applied in one store session (one transaction) at most: a bigger request commits
/// every this many, so it does not keep other writers waiting for its whole length.
const SESSION_EVENTS: usize = 500;

const FILE_SCHEMES: [&str; 7] = ["s3://", "gs://", "gcs://", "file://", "hdfs://", "abfss://", "wasbs://"];

/// What a dataset resolves to: the best-matching container in each datastore it matches that
/// the caller can edit (best first), or why it matches none.
type Resolution = std::result::Result<Vec<Container>, Unresolved>;

/// One end a dataset gives a connection: a container (with it), or an external asset.
type Resolved = (End, Option<Container>);

/// Resolves OpenLineage datasets to containers, caching per event. Seed 000: where several
/// datastores match a dataset, the event applies to the matches the caller can edit; a dataset
/// whose namespace a datastore lists but with no writable match is denied (tables not yet
/// catalogued included); a dataset no datastore lists stays an external endpoint.
struct Resolver<'a> {
    lineage: &'a Lineage,
    caller: &'a Caller,
    datastores: Vec<Datastore>,
    cache: HashMap<(String, String), Resolution>,
    /// Containers read ahead for the event's datasets by `prefetch`, and the datasets covered.
    pool: Vec<Container>,
    prefetched: HashSet<(String, String)>,
    /// Field ids by lowercased name, per container (see `Known`).
    fields: HashMap<Id, HashMap<String, Id>>,
    /// Container id to datastore id of every container read or created (see `Known`).
    container_datastores: HashMap<Id, Id>,
}

impl<'a> Resolver<'a> {
    fn new(lineage: &'a Lineage, caller: &'a Caller, datastores: Vec<Datastore>, known: Known) -> Resolver<'a> {
        Resolver {
            lineage,
            caller,
            datastores,
            cache: known.resolved,
            pool: Vec::new(),
            prefetched: HashSet::new(),
            fields: known.fields,
            container_datastores: known.datastores,
        }
    }

    /// What this resolver learnt, for the next event's.
    fn into_known(self) -> Known {
        Known { resolved: self.cache, fields: self.fields, datastores: self.container_datastores }
    }

    /// The datastores that list the namespace, in the order the store lists datastores.
    fn namespace_datastores(&self, namespace: &str) -> Vec<Id> {
        let ns = normalize_namespace(namespace);
        self.datastores
            .iter()
            .filter(|d| d.namespaces.iter().any(|n| normalize_namespace(n) == ns))
            .map(|d| d.id)
            .collect()
    }

    fn writable(&self, datastore: Id) -> bool {
        self.caller.has(datastore, Permission::Editor)
    }

    /// Reads the candidate containers of every dataset the event names in one store call, so
    /// resolving an event costs one lookup rather than one per dataset.
    async fn prefetch(&mut self, event: &Event) -> Result<()> {
        let mut wanted: BTreeSet<(String, String)> = BTreeSet::new();
        for d in event.datasets() {
            wanted.insert((d.namespace.clone(), d.name.clone()));
            wanted.extend(d.symlinks.iter().map(|l| (l.namespace.clone(), l.name.clone())));
            if let Some(prev) = d.lifecycle.as_ref().and_then(|l| l.previous.as_ref()) {
                wanted.insert((prev.namespace.clone(), prev.name.clone()));
            }
            wanted.extend(d.column_lineage.iter().map(|e| (e.input.namespace.clone(), e.input.name.clone())));
        }
        let mut names = BTreeSet::new();
        let mut datastores = BTreeSet::new();
        let mut covered = Vec::new();
        // Containers resolved by earlier events of the batch: no read, but their fields may be.
        let mut known: Vec<Id> = Vec::new();
        for (namespace, name) in wanted {
            if let Some(hit) = self.cache.get(&(namespace.clone(), name.clone())) {
                known.extend(hit.iter().flatten().map(|c| c.id));
                continue;
            }
            let ds = self.namespace_datastores(&namespace);
            if ds.is_empty() {
                continue;
            }
            names.extend(crate::service::name_candidates(&name.trim().to_lowercase()));
            datastores.extend(ds);
            covered.push((namespace, name));
        }
        if !names.is_empty() {
            let names: Vec<String> = names.into_iter().collect();
            let datastores: Vec<Id> = datastores.into_iter().collect();
            self.pool = self.lineage.store.containers_by_names(&names, Some(&datastores)).await?;
            self.container_datastores.extend(self.pool.iter().map(|c| (c.id, c.datastore_id)));
            self.prefetched.extend(covered);
        }
        // Schemas and column lineage name fields: read the candidates' fields in the same breath.
        let names_fields = event
            .datasets()
            .any(|d| !d.schema.is_empty() || !d.column_lineage.is_empty() || !d.dataset_wide.is_empty());
        let mut missing: Vec<Id> =
            self.pool.iter().map(|c| c.id).chain(known).filter(|id| !self.fields.contains_key(id)).collect();
        missing.sort_unstable();
        missing.dedup();
        if names_fields && !missing.is_empty() {
            self.fields.extend(self.lineage.field_names(&missing).await?);
        }
        Ok(())
    }

    async fn find(&mut self, namespace: &str, name: &str) -> Result<Resolution> {
        let key = (namespace.to_string(), name.to_string());
        if let Some(hit) = self.cache.get(&key) {
            return Ok(hit.clone());
        }
        let ns = normalize_namespace(namespace);
        let matching = self.namespace_datastores(namespace);
        let unresolved = |reason: &'static str, message: String| Unresolved {
            namespace: namespace.to_string(),
            name: name.to_string(),
            reason,
            message,
        };
        let result = if matching.is_empty() {
            Err(unresolved("namespaceNotMapped", format!("no datastore lists the namespace {namespace:?}")))
        } else {
            let found = self.lookup(&matching, &key).await?;
            if !found.is_empty() {
                let writable: Vec<Container> =
                    found.iter().filter(|c| self.writable(c.datastore_id)).cloned().collect();
                if writable.is_empty() {
                    let ids: Vec<String> = found.iter().map(|c| c.datastore_id.to_string()).collect();
                    return Err(Error::Forbidden(format!(
                        "the dataset {namespace}/{name} matches containers only in datastores you cannot edit ({}); \
                         this OpenLineage event needs EDITOR on at least one of them",
                        ids.join(", ")
                    )));
                }
                Ok(writable)
            } else if !matching.iter().any(|d| self.writable(*d)) {
                let ids: Vec<String> = matching.iter().map(Id::to_string).collect();
                return Err(Error::Forbidden(format!(
                    "the dataset {namespace}/{name} is not catalogued and its namespace belongs to datastores you \
                     cannot edit ({}); this OpenLineage event needs EDITOR on at least one of them",
                    ids.join(", ")
                )));
            } else if FILE_SCHEMES.iter().any(|s| ns.starts_with(s)) {
                Err(unresolved("notFound", format!("no container matches the path {name:?}")))
            } else if !name.contains('.') {
                Err(unresolved(
                    "unparsableName",
                    format!("{name:?} has no schema and table to match or create a container with"),
                ))
            } else {
                Err(unresolved(
                    "creationDisabled",
                    format!("no container {name:?} in the datastore; auto-creation is off"),
                ))
            }
        };
        if let Ok(found) = &result {
            self.container_datastores.extend(found.iter().map(|c| (c.id, c.datastore_id)));
        }
        self.cache.insert(key, result.clone());
        Ok(result)
    }

    /// The best match in each of `datastores` (see `match_rank`), best first, ties in datastore
    /// order. Case-insensitive: warehouses fold unquoted names, producers spell them either way.
    async fn lookup(&self, datastores: &[Id], key: &(String, String)) -> Result<Vec<Container>> {
        let wanted = key.1.trim().to_lowercase();
        let read;
        let pool: &[Container] = if self.prefetched.contains(key) {
            &self.pool
        } else {
            read = self
                .lineage
                .store
                .containers_by_names(&crate::service::name_candidates(&wanted), Some(datastores))
                .await?;
            &read
        };
        let mut best: Vec<(u8, usize, Container)> = Vec::new();
        for (order, ds) in datastores.iter().enumerate() {
            let mut top: Option<(u8, &Container)> = None;
            for c in pool.iter().filter(|c| c.datastore_id == *ds) {
                let rank = crate::service::match_rank(&wanted, c);
                if rank > 0 && top.is_none_or(|(r, _)| rank > r) {
                    top = Some((rank, c));
                }
            }
            if let Some((rank, c)) = top {
                best.push((rank, order, c.clone()));
            }
        }
        best.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(best.into_iter().map(|(_, _, c)| c).collect())
    }

    /// Container id to datastore id of every container this resolver has read or created.
    fn known_datastores(&self) -> &HashMap<Id, Id> {
        &self.container_datastores
    }

    /// The containers of a dataset, else of its first symlink that resolves; none when neither
    /// does (no auto-creation here).
    async fn containers(&mut self, d: &ol::Dataset) -> Result<Vec<Container>> {
        if let Ok(found) = self.find(&d.namespace, &d.name).await? {
            return Ok(found);
        }
        for link in &d.symlinks {
            if let Ok(found) = self.find(&link.namespace, &link.name).await? {
                return Ok(found);
            }
        }
        Ok(Vec::new())
    }

    /// The dataset's ends: its containers, else through a symlink, else auto-created, else one
    /// external asset.
    async fn end(&mut self, d: &ol::Dataset, unresolved: &mut BTreeSet<Unresolved>) -> Result<Vec<Resolved>> {
        let as_ends = |found: Vec<Container>| -> Vec<Resolved> {
            found.into_iter().map(|c| (End::Container { id: c.id }, Some(c))).collect()
        };
        match self.find(&d.namespace, &d.name).await? {
            Ok(found) => return Ok(as_ends(found)),
            Err(first) => {
                for link in &d.symlinks {
                    if let Ok(found) = self.find(&link.namespace, &link.name).await? {
                        return Ok(as_ends(found));
                    }
                }
                match self.auto_create(d, first).await? {
                    Ok(c) => return Ok(as_ends(vec![c])),
                    Err(why) => {
                        unresolved.insert(why);
                    }
                }
            }
        }
        Ok(vec![(End::External { fqn: external_fqn(&d.namespace, &d.name) }, None)])
    }

    /// Seed 002's auto-creation: when enabled, a dataset whose namespace a datastore the caller
    /// can edit lists but whose table is missing becomes a container there with the `schema`
    /// facet's fields. Otherwise, or when that is impossible, the reason it stays unresolved.
    async fn auto_create(
        &mut self,
        d: &ol::Dataset,
        why: Unresolved,
    ) -> Result<std::result::Result<Container, Unresolved>> {
        if why.reason != "creationDisabled" || !self.lineage.auto_create {
            return Ok(Err(why));
        }
        if d.schema.is_empty() {
            return Ok(Err(Unresolved {
                reason: "missingColumns",
                message: "the table is missing and the event's schema facet carries no columns".into(),
                ..why
            }));
        }
        let Some(ds) = self.namespace_datastores(&d.namespace).into_iter().find(|ds| self.writable(*ds)) else {
            return Ok(Err(why));
        };
        let parts: Vec<&str> = d.name.split('.').collect();
        let (database, schema, name) = match parts.as_slice() {
            [schema, table] => (None, Some(schema.to_string()), table.to_string()),
            [db, schema, rest @ ..] => (Some(db.to_string()), Some(schema.to_string()), rest.join(".")),
            _ => return Ok(Err(why)),
        };
        let input = crate::domain::ContainerInput {
            datastore_id: ds,
            name,
            database,
            schema,
            fields: d
                .schema
                .iter()
                .map(|f| crate::domain::FieldInput {
                    name: f.name.clone(),
                    data_type: f.data_type.clone(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let (container, _) = self.lineage.store.upsert_container(input).await?;
        tracing::info!(container = container.id, dataset = %d.name, "container created from an OpenLineage dataset");
        // Another spelling that did not resolve before may name the new container now.
        self.cache.retain(|_, r| r.is_ok());
        self.container_datastores.insert(container.id, container.datastore_id);
        self.cache.insert((d.namespace.clone(), d.name.clone()), Ok(vec![container.clone()]));
        Ok(Ok(container))
    }
}

fn job_key(kind: EventKind, namespace: &str, name: &str) -> String {
    let k = if kind == EventKind::Job { "job" } else { "run" };
    json!(["openlineage", k, namespace, name]).to_string()
}

impl Lineage {
    /// Stores, validates and applies each event in turn; one event's failure does not stop the rest.
    /// The request's events are stored in one transaction before any is applied, and their
    /// outcomes recorded in one transaction at the end.
    pub async fn ingest_openlineage(&self, caller: &Caller, events: Vec<Value>) -> Result<IngestReport> {
        let limits = Limits::default();
        let mut report = IngestReport::default();
        let now = crate::domain::now();
        let mut validated = Vec::with_capacity(events.len());
        let mut stored = Vec::with_capacity(events.len());
        for raw in events {
            let v = ol::validate(&raw, now, &limits);
            stored.push(stored_event(caller, raw, &v, now));
            validated.push(v);
        }
        let count = stored.len();
        let inserted = match self.store.insert_events(stored).await {
            Ok(x) => x,
            Err(e) => {
                tracing::error!(error = %e, events = count, "storing OpenLineage events failed");
                for (index, v) in validated.iter().enumerate() {
                    let mut rep = EventReport::new(index);
                    rep.kind = v.as_ref().ok().map(|e| kind_name(e.kind));
                    rep.errors.push((String::new(), "the event could not be stored; retry".into()));
                    report.events.push(rep);
                }
                return Ok(report);
            }
        };
        // Where an event of this request went in `report`, for duplicates within the request.
        let mut seen: HashMap<Id, usize> = HashMap::new();
        let mut items = validated.into_iter().zip(inserted).enumerate().peekable();
        while items.peek().is_some() {
            let chunk: Vec<_> = items.by_ref().take(SESSION_EVENTS).collect();
            let (session, lineage) = self.session().await;
            let first = report.events.len();
            let mut pending = Pending::default();
            let mut forward = Vec::new();
            for (index, (v, (stored, duplicate))) in chunk {
                let earlier = seen.get(&stored.id).map(|&i| &report.events[i]);
                let rep =
                    lineage.ingest_one(caller, index, v, stored, duplicate, earlier, &mut pending, &mut forward).await;
                if let Some(id) = rep.id {
                    seen.entry(id).or_insert(index);
                }
                report.events.push(rep);
                // The embedded store's calls run on this worker without yielding: let the
                // worker's other tasks in between events.
                tokio::task::yield_now().await;
            }
            lineage.flush(&mut pending).await;
            if let Some(s) = session {
                if let Err(e) = s.commit_session().await {
                    tracing::error!(error = %e, events = report.events.len() - first, "committing OpenLineage events failed");
                    forward.clear();
                    for rep in report.events[first..].iter_mut().filter(|r| matches!(r.status, "applied" | "ignored")) {
                        rep.status = "failed";
                        rep.errors.push((String::new(), "the store could not commit the event; retry".into()));
                    }
                }
            }
            if let Some(f) = &self.forwarder {
                forward.iter().for_each(|raw| f.forward(raw));
            }
        }
        Ok(report)
    }

    /// A store session for a run of events (their reads and writes in one transaction, one commit)
    /// and this service on it; without one (Neo4j, or the writer not free in time) each write
    /// commits alone.
    async fn session(&self) -> (Option<Arc<dyn Store>>, Lineage) {
        match self.store.session().await {
            Ok(Some(s)) => (Some(s.clone()), Lineage { store: s, ..self.clone() }),
            Ok(None) => (None, self.clone()),
            Err(e) => {
                tracing::warn!(error = %e, "no store session; applying each event in its own transaction");
                (None, self.clone())
            }
        }
    }

    /// Applies one stored event unless it duplicates one already applied or rejected (`earlier`,
    /// when that one came in this same request and its outcome is not stored yet).
    #[allow(clippy::too_many_arguments)]
    async fn ingest_one(
        &self,
        caller: &Caller,
        index: usize,
        validated: std::result::Result<Event, Vec<ol::ValidationIssue>>,
        stored: StoredEvent,
        duplicate: bool,
        earlier: Option<&EventReport>,
        pending: &mut Pending,
        forward: &mut Vec<Value>,
    ) -> EventReport {
        let mut rep = EventReport::new(index);
        rep.kind = validated.as_ref().ok().map(|e| kind_name(e.kind));
        rep.id = Some(stored.id);
        let (status, errors): (&str, Vec<(String, String)>) = match earlier {
            Some(e) => (e.status, e.errors.clone()),
            None => (stored.status.as_str(), stored_errors(&stored.errors)),
        };
        if duplicate && status == "rejected" {
            // The same invalid event is the same rejection, with its errors; nothing is stored twice.
            rep.status = "rejected";
            rep.errors = errors;
            rep.summary = json!({"duplicate_of": stored.id});
            return rep;
        }
        // Applied or ignored before: nothing to do. A failed or denied event is tried again (the
        // store may be back, the caller may have the rights).
        if duplicate && matches!(status, "applied" | "ignored") {
            rep.status = "ignored";
            rep.summary = json!({"duplicate_of": stored.id, "original_status": status});
            return rep;
        }
        let raw = stored.body;
        self.apply_stored(caller, &mut rep, stored.id, validated, pending).await;
        // Forwarded once committed.
        if self.forwarder.is_some() && matches!(rep.status, "applied" | "ignored") {
            forward.push(raw);
        }
        rep
    }

    /// Applies a stored event's validation result and records the outcome on it.
    async fn apply_stored(
        &self,
        caller: &Caller,
        rep: &mut EventReport,
        event_id: Id,
        validated: std::result::Result<Event, Vec<ol::ValidationIssue>>,
        pending: &mut Pending,
    ) {
        let event = match validated {
            Ok(e) => e,
            Err(issues) => {
                rep.status = "rejected";
                rep.errors = issues.into_iter().map(|i| (i.pointer, i.message)).collect();
                pending.finish(rep, None);
                return;
            }
        };
        match self.apply_event(caller, event_id, &event, pending).await {
            Ok((summary, metadata, unresolved)) => {
                let changed = summary.edges_asserted + summary.edges_retired + summary.evidence_retired + metadata > 0;
                rep.status = if changed { "applied" } else { "ignored" };
                rep.edges_created = summary.edges_created;
                rep.summary = json!({
                    "edges_created": summary.edges_created,
                    "edges_revived": summary.edges_revived,
                    "edges_asserted": summary.edges_asserted,
                    "evidence_created": summary.evidence_created,
                    "evidence_retired": summary.evidence_retired,
                    "edges_retired": summary.edges_retired,
                    "metadata_asserted": metadata,
                    "unresolved_datasets": unresolved.iter().map(|u| json!({"namespace": u.namespace, "name": u.name, "reason": u.reason})).collect::<Vec<_>>(),
                    "warnings": event.warnings.iter().map(|w| json!({"location": w.pointer, "message": w.message})).collect::<Vec<_>>(),
                });
                rep.unresolved = unresolved;
            }
            Err(Error::BadInput(m)) => {
                rep.status = "rejected";
                rep.errors.push((String::new(), m));
            }
            Err(Error::Forbidden(m)) => {
                rep.status = "denied";
                rep.errors.push((String::new(), m));
            }
            Err(e) => {
                tracing::error!(error = e.message(), event_id, "applying an OpenLineage event failed");
                rep.status = "failed";
                rep.errors.push((String::new(), e.client_message()));
            }
        }
        pending.finish(rep, Some(&event));
    }

    /// Re-applies stored events with ids above `after`, oldest first (for example after new
    /// datastores are registered, so datasets that were external now resolve). `statuses`
    /// limits it to events whose last outcome is one of them. `progress` hears each event.
    pub async fn replay_openlineage(
        &self,
        after: Id,
        statuses: &[String],
        mut progress: impl FnMut(&EventReport),
    ) -> Result<IngestReport> {
        let limits = Limits::default();
        let mut report = IngestReport::default();
        let mut cursor = after;
        let mut pending = Pending::default();
        loop {
            let batch = self.store.events_after(cursor, 500).await?;
            let Some(last) = batch.last() else { break };
            cursor = last.id;
            let (session, lineage) = self.session().await;
            for stored in batch {
                if !statuses.is_empty() && !statuses.iter().any(|s| s == &stored.status) {
                    continue;
                }
                // Replay acts with full rights; who sent the event stays on its evidence.
                let caller =
                    Caller { user: stored.submitted_by.clone().unwrap_or_else(|| "replay".into()), ..Caller::system() };
                // Validated as of its arrival, so "at most five minutes in the future" holds.
                let validated = ol::validate(&stored.body, stored.received_at, &limits);
                let mut rep = EventReport::new(report.events.len());
                rep.id = Some(stored.id);
                rep.kind = validated.as_ref().ok().map(|e| kind_name(e.kind));
                lineage.apply_stored(&caller, &mut rep, stored.id, validated, &mut pending).await;
                progress(&rep);
                report.events.push(rep);
                tokio::task::yield_now().await;
            }
            lineage.flush(&mut pending).await;
            if let Some(s) = session {
                s.commit_session().await?;
            }
        }
        Ok(report)
    }

    /// Records the queued outcomes (one transaction).
    async fn flush(&self, pending: &mut Pending) {
        // The caches start afresh too: a replay flushes every few hundred events.
        let outcomes = std::mem::take(pending).outcomes;
        let n = outcomes.len();
        if let Err(e) = self.store.finish_events(outcomes).await {
            tracing::error!(error = %e, events = n, "recording events' outcomes failed");
        }
    }

    /// Resolves the event and applies its assertions and retirements in one transaction.
    async fn apply_event(
        &self,
        caller: &Caller,
        event_id: Id,
        event: &Event,
        pending: &mut Pending,
    ) -> Result<(AssertionSummary, i64, Vec<Unresolved>)> {
        let known = std::mem::take(&mut pending.known);
        let mut resolver = Resolver::new(self, caller, pending.datastores(self).await?, known);
        let out = self.apply_resolved(caller, event_id, event, pending, &mut resolver).await;
        pending.known = resolver.into_known();
        out
    }

    async fn apply_resolved(
        &self,
        caller: &Caller,
        event_id: Id,
        event: &Event,
        pending: &mut Pending,
        resolver: &mut Resolver<'_>,
    ) -> Result<(AssertionSummary, i64, Vec<Unresolved>)> {
        let key = event.job.as_ref().map(|job| job_key(event.kind, &job.namespace, &job.name));
        let run_id = event.run_id.clone().unwrap_or_default();
        let state = event.event_type;
        let starts = event.kind == EventKind::Run
            && matches!(state, Some(RunState::Start) | Some(RunState::Running) | Some(RunState::Other) | None);
        let check_run = key.is_some() && starts && !pending.failed_runs.contains(&run_id);
        // Three independent reads side by side: on Neo4j each is a round trip of its own.
        let (prefetched, states, prior) = tokio::join!(
            resolver.prefetch(event),
            async {
                match check_run {
                    true => self.store.run_event_states(&run_id).await.map(Some),
                    false => Ok(None),
                }
            },
            self.prior_evidence(key.as_deref()),
        );
        prefetched?;
        let (states, prior) = (states?, prior?);
        let mut unresolved = BTreeSet::new();
        let mut batch = AssertionBatch::default();

        // Lifecycle changes first: a DROP retires every OpenLineage edge touching the dataset.
        let mut dropped: Vec<End> = Vec::new();
        for d in event.inputs.iter().chain(&event.outputs).chain(event.dataset.iter()) {
            if d.lifecycle.as_ref().is_some_and(|l| l.change == ol::LifecycleChange::Drop) {
                dropped.extend(resolver.end(d, &mut unresolved).await?.into_iter().map(|(e, _)| e));
            }
        }
        if !dropped.is_empty() {
            let edges = self.store.live_edges_touching_ends(&dropped, SOURCE_TYPE).await?;
            let ids: Vec<Id> = edges.iter().map(|e| e.id).collect();
            self.retire_edges_in(&mut batch, &ids).await?;
        }
        // A RENAME moves the previous name's live OpenLineage lineage to the new name: each
        // edge is asserted again at the new end with its evidence, and the old one retires.
        let mut renamed: Vec<Assertion> = Vec::new();
        for d in event.inputs.iter().chain(&event.outputs).chain(event.dataset.iter()) {
            let Some(lc) = d.lifecycle.as_ref().filter(|l| l.change == ol::LifecycleChange::Rename) else { continue };
            let Some(prev) = &lc.previous else { continue };
            let old_ds =
                ol::Dataset { namespace: prev.namespace.clone(), name: prev.name.clone(), ..Default::default() };
            let olds = resolver.end(&old_ds, &mut unresolved).await?;
            let news = resolver.end(d, &mut unresolved).await?;
            // Each old end moves to the new end in its own datastore, else to the best new end.
            let moves: Vec<(End, End)> = olds
                .iter()
                .filter_map(|(old, oc)| {
                    let same_store = news
                        .iter()
                        .find(|(_, nc)| matches!((oc, nc), (Some(o), Some(n)) if o.datastore_id == n.datastore_id));
                    let (new, _) = same_store.or(news.first())?;
                    (old != new).then(|| (old.clone(), new.clone()))
                })
                .collect();
            for (old, new) in moves {
                let edges = self.store.live_edges_touching_ends(std::slice::from_ref(&old), SOURCE_TYPE).await?;
                let evidence = self.store.evidence_for_edges(&edges.iter().map(|e| e.id).collect::<Vec<_>>()).await?;
                for e in edges.iter().filter(|e| !e.is_field_edge()) {
                    let swap = |end: &End| if *end == old { new.clone() } else { end.clone() };
                    let (source, target) = (swap(&e.source), swap(&e.target));
                    for ev in evidence.iter().filter(|v| v.edge_id == e.id && v.retired_at.is_none()) {
                        if source != target {
                            renamed.push(Assertion {
                                edge: NewEdge {
                                    source: source.clone(),
                                    target: target.clone(),
                                    description: e.description.clone(),
                                    source_type: SOURCE_TYPE.into(),
                                    operation: e.operation.clone(),
                                    derived: e.derived,
                                    transformations: e.transformations.clone(),
                                    last_asserted_at: Some(event.event_time),
                                },
                                evidence: ev.clone(),
                            });
                        }
                        batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                    }
                    batch.retire_candidates.push(e.id);
                }
            }
        }

        batch.metadata = self.metadata_of(resolver, event, event_id).await?;
        let new_tags = self.new_tags(caller, &batch.metadata).await?;

        if key.is_none() {
            // A DatasetEvent carries no lineage of its own.
            batch.assert.extend(std::mem::take(&mut renamed));
            self.check_batch(caller, &batch, resolver.known_datastores()).await?;
            let metadata = batch.metadata.len() as i64;
            let sum = self.store.apply_assertions(batch, crate::domain::now()).await?;
            self.register_tags(new_tags).await?;
            return Ok((sum, metadata, unresolved.into_iter().collect()));
        }

        // A run that already failed or aborted is not undone by a late START or RUNNING.
        if starts {
            if pending.failed_runs.contains(&run_id) {
                return Ok((AssertionSummary::default(), 0, unresolved.into_iter().collect()));
            }
            // A FAIL that had nothing to retire was `ignored`, but the run failed all the same.
            if states.unwrap_or_default().iter().any(|(id, status, event_type)| {
                *id != event_id
                    && matches!(status.as_str(), "applied" | "ignored")
                    && matches!(event_type.as_deref(), Some("FAIL") | Some("ABORT"))
            }) {
                return Ok((AssertionSummary::default(), 0, unresolved.into_iter().collect()));
            }
        }

        let assertions = self.assertions_of(resolver, &mut unresolved, event, event_id, caller).await?;
        let asserted_ukeys: BTreeSet<(String, String)> =
            assertions.iter().map(|a| (a.edge.source.key(), a.edge.target.key())).collect();

        match (event.kind, state) {
            (EventKind::Run, Some(RunState::Fail) | Some(RunState::Abort)) => {
                // Retire what this run alone asserted; lineage an earlier run also asserted stays.
                for ev in &prior {
                    if ev.first_run_id.as_deref() == Some(run_id.as_str()) {
                        batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                        batch.retire_candidates.push(ev.edge_id);
                    }
                }
            }
            (EventKind::Run, Some(RunState::Complete)) => {
                let mut combined = asserted_ukeys.clone();
                for ev in prior.iter().filter(|e| e.run_id.as_deref() == Some(run_id.as_str())) {
                    if let Some(k) = &ev.ends {
                        combined.insert(k.clone());
                    }
                }
                if !combined.is_empty() {
                    for ev in &prior {
                        let still = ev.ends.as_ref().is_some_and(|k| combined.contains(k));
                        if !still {
                            batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                            batch.retire_candidates.push(ev.edge_id);
                        }
                    }
                }
                batch.assert = assertions;
            }
            (EventKind::Job, _) => {
                if !asserted_ukeys.is_empty() {
                    for ev in &prior {
                        if !ev.ends.as_ref().is_some_and(|k| asserted_ukeys.contains(k)) {
                            batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                            batch.retire_candidates.push(ev.edge_id);
                        }
                    }
                }
                batch.assert = assertions;
            }
            _ => batch.assert = assertions,
        }
        // Keep the first run that asserted each edge, so FAIL/ABORT can tell what was theirs.
        let first_runs: HashMap<(&str, &str), &str> = prior
            .iter()
            .filter_map(|e| {
                let (s, t) = e.ends.as_ref()?;
                Some(((s.as_str(), t.as_str()), e.first_run_id.as_deref()?))
            })
            .collect();
        for a in &mut batch.assert {
            let k = (a.edge.source.key(), a.edge.target.key());
            if let (Some(first), Some(details)) =
                (first_runs.get(&(k.0.as_str(), k.1.as_str())), a.evidence.details.as_mut())
            {
                details["firstRunId"] = json!(first);
            }
        }
        batch.assert.extend(renamed);
        self.check_batch(caller, &batch, resolver.known_datastores()).await?;
        let metadata = batch.metadata.len() as i64;
        let sum = self.store.apply_assertions(batch, crate::domain::now()).await?;
        self.register_tags(new_tags).await?;
        Ok((sum, metadata, unresolved.into_iter().collect()))
    }

    /// The live evidence of a job's earlier events (none without a job), each with its edge's ends.
    async fn prior_evidence(&self, key: Option<&str>) -> Result<Vec<PriorEvidence>> {
        let Some(key) = key else { return Ok(Vec::new()) };
        Ok(self.store.live_evidence_of_key(key).await?)
    }

    /// Tags the event's metadata uses that no one created yet. Creating a global tag needs the
    /// ADMIN role: otherwise the event is refused alone (seed 000).
    async fn new_tags(&self, caller: &Caller, metadata: &[crate::domain::MetadataAssertion]) -> Result<Vec<String>> {
        let used: BTreeSet<String> = metadata
            .iter()
            .filter(|m| m.attribute == "tags")
            .flat_map(|m| m.value.as_array().cloned().unwrap_or_default())
            .filter_map(|t| {
                let key = t.get("key").and_then(Value::as_str)?;
                let value = t.get("value").and_then(Value::as_str).unwrap_or_default();
                Some(format!("{key}={value}"))
            })
            .collect();
        if used.is_empty() {
            return Ok(Vec::new());
        }
        let known: BTreeSet<String> = self.store.list_docs("tag").await?.into_iter().map(|(k, _)| k).collect();
        let new: Vec<String> = used.into_iter().filter(|t| !known.contains(t)).collect();
        if !new.is_empty() && !caller.is_admin() {
            return Err(Error::Forbidden(format!(
                "creating the new tag(s) {} needs the ADMIN role; ask an admin to create them first",
                new.join(", ")
            )));
        }
        Ok(new)
    }

    async fn register_tags(&self, tags: Vec<String>) -> Result<()> {
        for t in tags {
            self.store.put_doc("tag", &t, json!({"created": crate::domain::now()})).await?;
        }
        Ok(())
    }

    /// Seed 000: EDITOR on the datastore of every container a connection touches, the
    /// connections the event retires included; metadata changes need it on their container's.
    /// `known` maps the containers the resolver already read to their datastores, so only the
    /// others (ends of retired edges, mostly) cost a read.
    async fn check_batch(&self, caller: &Caller, batch: &AssertionBatch, known: &HashMap<Id, Id>) -> Result<()> {
        if caller.unrestricted_admin {
            return Ok(());
        }
        let mut ends: Vec<End> =
            batch.assert.iter().flat_map(|a| [a.edge.source.clone(), a.edge.target.clone()]).collect();
        let retiring: Vec<Id> =
            batch.retire_candidates.iter().chain(batch.retire_evidence.iter().map(|(id, _)| id)).copied().collect();
        if !retiring.is_empty() {
            for e in self.store.edges_by_ids(&retiring).await? {
                ends.push(e.source);
                ends.push(e.target);
            }
        }
        ends.extend(batch.metadata.iter().map(|m| End::Container { id: m.container_id }));
        let (seen, unseen): (Vec<&End>, Vec<&End>) =
            ends.iter().partition(|e| e.container_id().is_some_and(|c| known.contains_key(&c)));
        let mut datastores: BTreeSet<Id> =
            seen.iter().filter_map(|e| e.container_id().and_then(|c| known.get(&c).copied())).collect();
        datastores.extend(self.datastores_of_ends(unseen).await?);
        caller.require(datastores, crate::auth::Permission::Editor, "this OpenLineage event")
    }

    /// Description, tags, owners and field types of the datasets that resolve to containers.
    async fn metadata_of(
        &self,
        resolver: &mut Resolver<'_>,
        event: &Event,
        event_id: Id,
    ) -> Result<Vec<crate::domain::MetadataAssertion>> {
        let observed = crate::domain::now();
        let mut rows = Vec::new();
        for d in event.inputs.iter().chain(&event.outputs).chain(event.dataset.iter()) {
            let has_metadata =
                d.description.is_some() || d.tags.is_some() || d.owners.is_some() || !d.schema.is_empty();
            if !has_metadata {
                continue;
            }
            for c in resolver.containers(d).await? {
                let details = json!({"event_id": event_id, "dataset": {"namespace": d.namespace, "name": d.name}});
                let row = |field_id: Option<Id>, attribute: &str, value: Value| crate::domain::MetadataAssertion {
                    container_id: c.id,
                    field_id,
                    attribute: attribute.to_string(),
                    source: SOURCE_TYPE.to_string(),
                    provider: event.producer.clone(),
                    value,
                    asserted_at: event.event_time,
                    observed_at: observed,
                    details: Some(details.clone()),
                };
                if let Some(text) = &d.description {
                    rows.push(row(None, "description", json!(text)));
                }
                if let Some(owners) = &d.owners {
                    let v: Vec<Value> = owners.iter().map(|o| json!({"name": o.name, "type": o.kind})).collect();
                    rows.push(row(None, "owners", Value::Array(v)));
                }
                if let Some(tags) = &d.tags {
                    let mut by_field: BTreeMap<Option<String>, Vec<Value>> = BTreeMap::new();
                    for t in tags {
                        by_field
                            .entry(t.field.clone())
                            .or_default()
                            .push(json!({"key": t.key, "value": t.value, "source": t.source}));
                    }
                    for (field, list) in by_field {
                        let field_id = match field {
                            None => None,
                            Some(f) => match self.field_id_cached(&mut resolver.fields, c.id, &f).await? {
                                Some(id) => Some(id),
                                None => continue,
                            },
                        };
                        rows.push(row(field_id, "tags", Value::Array(list)));
                    }
                }
                for f in &d.schema {
                    // dbt sends descriptions without types: each is recorded when it is sent.
                    let Some(id) = self.field_id_cached(&mut resolver.fields, c.id, &f.name).await? else { continue };
                    if let Some(t) = &f.data_type {
                        rows.push(row(Some(id), "type", json!(t)));
                    }
                    if let Some(text) = &f.description {
                        rows.push(row(Some(id), "description", json!(text)));
                    }
                }
            }
        }
        Ok(rows)
    }

    /// Table-level edges from inputs × outputs and field-level edges from the column lineage.
    async fn assertions_of(
        &self,
        resolver: &mut Resolver<'_>,
        unresolved: &mut BTreeSet<Unresolved>,
        event: &Event,
        event_id: Id,
        caller: &Caller,
    ) -> Result<Vec<Assertion>> {
        let Some(job) = &event.job else { return Ok(Vec::new()) };
        let key = job_key(event.kind, &job.namespace, &job.name);
        let run_id = event.run_id.clone();
        let operation = if event.kind == EventKind::Job { "job_event" } else { "run_event" };
        let evidence = |details: Value| Evidence {
            edge_id: 0,
            key: key.clone(),
            provider: event.producer.clone(),
            evidence_type: operation.to_string(),
            authorship: "asserted".to_string(),
            source_relation: Some(json!([job.namespace, job.name]).to_string()),
            observed_at: Some(event.event_time),
            first_observed_operation_id: None,
            last_observed_operation_id: None,
            details: Some(details),
            retired_at: None,
        };
        let base = |source: &ol::Dataset, target: &ol::Dataset| {
            json!({
                "runId": run_id,
                "firstRunId": run_id,
                "runState": state_name(event.event_type),
                "job": {"namespace": job.namespace, "name": job.name},
                "source": {"namespace": source.namespace, "name": source.name},
                "target": {"namespace": target.namespace, "name": target.name},
                "eventId": event_id,
                "submittedBy": caller.user,
                "parent": event.parent.as_ref().map(|p| json!({"runId": p.run_id, "job": {"namespace": p.job.namespace, "name": p.job.name}})),
            })
        };
        let mut inputs = Vec::new();
        for d in &event.inputs {
            inputs.push((d, resolver.end(d, unresolved).await?));
        }
        let mut outputs = Vec::new();
        for d in &event.outputs {
            outputs.push((d, resolver.end(d, unresolved).await?));
        }
        let mut out = Vec::new();
        // A dataset matching several writable datastores contributes one end per datastore.
        for (i, input_ends) in &inputs {
            for (o, output_ends) in &outputs {
                for (ie, ic) in input_ends {
                    for (oe, oc) in output_ends {
                        if ie == oe || (ic.is_none() && oc.is_none()) {
                            // A dataset reading itself is no edge; two unknown ends make no
                            // relationship (the event stays stored for replay).
                            continue;
                        }
                        let mut details = base(i, o);
                        details["sql"] = json!(event.job_sql);
                        details["sourceCode"] = json!(event
                            .job_source_code
                            .as_ref()
                            .map(|c| json!({"language": c.language, "sourceCode": c.code})));
                        out.push(Assertion {
                            edge: NewEdge {
                                source: ie.clone(),
                                target: oe.clone(),
                                description: None,
                                source_type: SOURCE_TYPE.into(),
                                operation: Some(operation.into()),
                                derived: None,
                                transformations: None,
                                last_asserted_at: Some(event.event_time),
                            },
                            evidence: evidence(details),
                        });
                    }
                }
            }
        }
        // Column lineage: both ends must be catalogued fields.
        for (o, output_ends) in &outputs {
            let targets: Vec<Id> = output_ends.iter().filter_map(|(_, c)| c.as_ref().map(|c| c.id)).collect();
            if o.column_lineage.is_empty() || targets.is_empty() {
                continue;
            }
            for edge in &o.column_lineage {
                let source_ds = ol::Dataset {
                    namespace: edge.input.namespace.clone(),
                    name: edge.input.name.clone(),
                    ..Default::default()
                };
                let sources: Vec<Id> = resolver
                    .end(&source_ds, unresolved)
                    .await?
                    .into_iter()
                    .filter_map(|(_, c)| c.map(|c| c.id))
                    .collect();
                let mut pairs = Vec::new();
                for oc in &targets {
                    let Some(t) = self.field_id_cached(&mut resolver.fields, *oc, &edge.output_field).await? else {
                        continue;
                    };
                    for sc in &sources {
                        if let Some(s) = self.field_id_cached(&mut resolver.fields, *sc, &edge.input.field).await? {
                            pairs.push(((*sc, s), (*oc, t)));
                        }
                    }
                }
                if pairs.is_empty() {
                    unresolved.insert(Unresolved {
                        namespace: edge.input.namespace.clone(),
                        name: format!("{}.{}", edge.input.name, edge.input.field),
                        reason: "missingColumns",
                        message: format!(
                            "column lineage {} -> {} does not resolve to catalogued fields (at {})",
                            edge.input.field, edge.output_field, edge.pointer
                        ),
                    });
                    continue;
                }
                let transformations: Vec<Value> = edge
                    .input
                    .transformations
                    .iter()
                    .map(|t| json!({"type": t.kind.as_str(), "subtype": t.subtype, "description": t.description, "masking": t.masking}))
                    .collect();
                for ((sc, s), (oc, t)) in pairs {
                    if s == t {
                        continue;
                    }
                    let mut details = base(&source_ds, o);
                    details["transformations"] = Value::Array(transformations.clone());
                    out.push(Assertion {
                        edge: NewEdge {
                            source: End::Field { id: s, container_id: sc },
                            target: End::Field { id: t, container_id: oc },
                            description: None,
                            source_type: SOURCE_TYPE.into(),
                            operation: Some(operation.into()),
                            derived: Some(ol::derived(&edge.input.transformations)),
                            transformations: Some(Value::Array(transformations.clone())),
                            last_asserted_at: Some(event.event_time),
                        },
                        evidence: evidence(details),
                    });
                }
            }
        }
        // One assertion per edge: the same pair reported twice in one event is one edge.
        let mut seen = BTreeSet::new();
        out.retain(|a| seen.insert((a.edge.source.key(), a.edge.target.key())));
        // Seed 000: the limit counts the writable datastore matches too, so a dataset matching
        // several datastores cannot multiply an event past it.
        let max = Limits::default().max_relationships;
        if out.len() > max {
            return Err(Error::BadInput(format!(
                "the event attempts {} relationships once its datasets are matched to the datastores you can edit; at most {max} are accepted",
                out.len()
            )));
        }
        Ok(out)
    }
}

/// Exposed for the transports' unresolved lists.
pub fn unresolved_json(u: &Unresolved, event_index: Option<usize>) -> Value {
    let mut v = json!({"namespace": u.namespace, "name": u.name, "reason": u.reason, "message": u.message});
    if let Some(i) = event_index {
        v["eventIndex"] = json!(i);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_fold_scheme_spellings() {
        assert_eq!(normalize_namespace("postgresql://Warehouse:5432/"), "postgres://warehouse:5432");
        assert_eq!(normalize_namespace("s3a://bucket"), "s3://bucket");
    }

    #[test]
    fn external_names_join_namespace_and_name() {
        assert_eq!(external_fqn("s3://bucket", "raw/orders"), "s3://bucket/raw/orders");
        assert_eq!(external_fqn("file:///", "tmp/x"), "file:///tmp/x");
    }

    #[test]
    fn job_keys_are_unambiguous() {
        assert_ne!(job_key(EventKind::Run, "a|b", "c"), job_key(EventKind::Run, "a", "b|c"));
        assert_ne!(job_key(EventKind::Run, "a", "b"), job_key(EventKind::Job, "a", "b"));
    }
}
