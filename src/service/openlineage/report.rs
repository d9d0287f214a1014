//! What ingesting OpenLineage events reports back: one `EventReport` per event, the datasets
//! that stayed unresolved, and `Pending`, the outcomes a request has applied but not yet
//! recorded on its stored events (they are written in one transaction at the end).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::resolve::Known;
use crate::domain::{Datastore, Id};
use crate::error::Result;
use crate::ingest::openlineage::{Event, EventKind, RunState};
use crate::service::Lineage;

/// What happened to one event.
#[derive(Debug, Clone)]
pub struct EventReport {
    pub index: usize,
    pub id: Option<Id>,
    /// `applied`, `recorded`, `ignored`, `rejected`, `failed` or `denied` (see `accepted`).
    pub status: &'static str,
    pub kind: Option<&'static str>,
    /// `[{location, message}]`.
    pub errors: Vec<(String, String)>,
    pub summary: Value,
    pub unresolved: Vec<Unresolved>,
    pub edges_created: i64,
    /// It failed because the store was unavailable (down, too slow, disk trouble): the whole
    /// request is then answered `UNAVAILABLE` so the client retries it.
    pub unavailable: bool,
}

/// A dataset that did not resolve to a catalog container (seed 002's reason codes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unresolved {
    pub namespace: String,
    pub name: String,
    /// Set for a column-lineage input field that did not resolve: the field of `name`.
    pub field: Option<String>,
    pub reason: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, Default)]
pub struct IngestReport {
    pub events: Vec<EventReport>,
}

/// Whether an event with this outcome was taken (it changed what it could, or had nothing new):
/// `applied` (lineage or metadata changed), `recorded` (no lineage changed, but the run's state
/// was recorded: a FAIL that retires nothing still fails its run) or `ignored` (nothing new).
/// `rejected`, `denied` and `failed` events were not taken; the last two are tried again.
pub fn accepted(status: &str) -> bool {
    matches!(status, "applied" | "recorded" | "ignored")
}

impl IngestReport {
    pub fn count(&self, status: &str) -> usize {
        self.events.iter().filter(|e| e.status == status).count()
    }
}

impl EventReport {
    pub(super) fn new(index: usize) -> Self {
        EventReport {
            index,
            id: None,
            status: "failed",
            kind: None,
            errors: Vec::new(),
            summary: json!({}),
            unavailable: false,
            unresolved: Vec::new(),
            edges_created: 0,
        }
    }
}

/// What a request (or a replay batch) has applied but not yet recorded on the stored events.
#[derive(Default)]
pub(super) struct Pending {
    pub(super) outcomes: Vec<crate::domain::EventOutcome>,
    /// Runs whose FAIL or ABORT was taken in this batch: a later START of them is ignored,
    /// as the store's applied events would say once the outcomes are recorded.
    pub(super) failed_runs: HashSet<String>,
    /// Runs whose COMPLETE was taken in this batch: a later START of them keeps COMPLETE as
    /// its evidence's `runState`.
    pub(super) completed_runs: HashSet<String>,
    /// The datastores, read once per request: resolution reads them for every event.
    datastores: Option<Vec<Datastore>>,
    /// What the resolver learnt, handed from event to event.
    pub(super) known: Known,
    /// The chunk's prior state, read ahead when it is applied in a session (see `prior`).
    pub(super) prior: super::prior::Prior,
}

impl Pending {
    pub(super) fn finish(&mut self, rep: &EventReport, event: Option<&Event>) {
        let Some(id) = rep.id else { return };
        if let Some(e) = event {
            if accepted(rep.status)
                && e.kind == EventKind::Run
                && matches!(e.event_type, Some(RunState::Fail) | Some(RunState::Abort))
            {
                self.failed_runs.extend(e.run_id.clone());
            }
            if accepted(rep.status) && e.kind == EventKind::Run && e.event_type == Some(RunState::Complete) {
                self.completed_runs.extend(e.run_id.clone());
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

    /// The datastores as they are after zero-setup mode created one.
    pub(super) fn set_datastores(&mut self, datastores: Vec<Datastore>) {
        self.datastores = Some(datastores);
    }

    pub(super) async fn datastores(&mut self, lineage: &Lineage) -> Result<Vec<Datastore>> {
        if self.datastores.is_none() {
            self.datastores = Some(lineage.store.list_datastores().await?);
        }
        Ok(self.datastores.clone().unwrap_or_default())
    }
}

/// Exposed for the transports' unresolved lists.
pub fn unresolved_json(u: &Unresolved, event_index: Option<usize>) -> Value {
    let mut v = json!({"namespace": u.namespace, "name": u.name, "reason": u.reason, "message": u.message});
    if let Some(f) = &u.field {
        v["field"] = json!(f);
    }
    if let Some(i) = event_index {
        v["eventIndex"] = json!(i);
    }
    v
}
