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
//!
//! The request flow lives here (`ingest_openlineage`, `replay_openlineage`, the store session
//! around a run of events); `resolve` matches datasets to containers, `assertions` turns a
//! resolved event into an `AssertionBatch` by the run-state rules above, `metadata` gathers the
//! datasets' descriptions, tags, owners and field types, and `report` holds what comes back.
//! `prior` reads what a chunk's events need of the store's state (their jobs' evidence, their
//! runs' states and datasets) once for the chunk, one read per kind, and keeps it current as
//! each event is applied.
//!
//! # How it fits
//!
//! (`service/openlineage/`: `mod.rs` the request flow and replay, `resolve.rs` the `Resolver` and `Known`,
//! `assertions.rs` the run-state rules and `check_batch`, `metadata.rs`, `report.rs` the `IngestReport` and `Pending`).
//! Applying OpenLineage events, one at a time: a request's events are validated and stored first, all in one
//! transaction (`insert_events`; a known fingerprint, also one earlier in the same list, is a duplicate), then each
//! event in order is resolve its datasets (`Resolver`: datastore `namespaces`, then names, then `symlinks`, then
//! auto-creation or the zero-setup mode's creation, else an external end `ext:openlineage:<namespace>/<name>`, with a
//! seed 002 reason; every namespace and name is read by `ingest::openlineage::naming`, the one parser of OpenLineage's
//! naming conventions, and a dataset's symlinks are aliases of one asset: it resolves through any, is created under its
//! `TABLE` symlink first, each of its names then resolves to it, and column-lineage input fields resolve through the
//! event's dataset of that name; a created container's other names are kept as `openlineage-alias` documents, read only
//! when creation is on and a name matches nothing, and by `node(namespace:, name:)`), build an `AssertionBatch` by the
//! run-state rules, check `EDITOR` on every touched datastore (`check_batch`), and applied with one `apply_assertions`.
//! The outcomes are recorded together at the end of the request (`finish_events`, one transaction); until then
//! `Pending` answers for them (a duplicate of an event earlier in the list, a START after its run's FAIL in the same
//! list), and it carries the request's datastores and what resolution learnt (`Known`: the datasets resolved, field ids
//! by name, each container's datastore) so that each event does not read them again: a batch names the same datasets
//! over and over, and inside a store session no other writer can add a container meanwhile (an auto-creation drops the
//! cached misses). Evidence is keyed by job (`job_key`), so each job asserts and retires its own lineage: COMPLETE
//! reconciles with what the run reported, FAIL and ABORT retire what the run alone asserted first, a JobEvent replaces
//! design-time lineage, a `DROP` retires the dataset's edges. `metadata_of` turns description, owners, tags and schema
//! facets into `MetadataAssertion`s. `replay_openlineage` re-applies stored events as `Caller::system()`. Where the
//! store offers a session (`Store::session`: both stores), up to 1,000 events on the embedded store (`SESSION_EVENTS`;
//! a commit writes each page it touched once, so fewer commits write fewer pages) and on Neo4j up to 1,000 applied
//! within 2 s (`CONFLICTING_SESSION_EVENTS`, `CONFLICTING_SESSION_TIME`, `--ingest-session-ms`: its session holds its locks on what it wrote until the
//! commit (ids come from blocks reserved outside it, see "Ids come from the database"), its change-log entries and job
//! and run updates wait in the session and are written before the commit, one statement per kind, and a process runs
//! one Neo4j session at a time, a gate as the embedded store's writer, so two sessions never deadlock on each other)
//! are applied and their outcomes recorded through it: one write transaction, whose reads see the earlier events'
//! writes, committed once; a failed event's writes are undone alone (a savepoint per write call), except
//! `apply_assertions`, which can fail only on the store's own errors: it runs without a savepoint (which copied every
//! page it first touched, a tenth of an event's time), and its failure poisons the session, so nothing of it commits.
//! When that commit fails, every event of the run reports `failed` and stays stored for `replay`; forwarding waits for
//! the commit. Neo4j has no savepoints (a failed statement fails the whole transaction), so any failed call fails its
//! session, and a concurrent writer can fail it too (Neo4j breaks a deadlock by failing one of the two transactions):
//! where `Store::session_conflicts` says so, a chunk whose session failed is applied again event by event without one,
//! each write in its own transaction and retried on a transient error as before sessions (`ingest_chunk`), so a
//! deadlock costs time, not events. A replay (which runs beside new requests after a restart) takes no such session: on
//! Neo4j its events commit one by one. In a session, before a chunk's first event (`read_ahead`), the `Resolver` reads
//! the candidate containers of all the chunk's datasets in one `containers_by_names` call and, when an event names
//! fields (a schema, column lineage), their fields in one `fields_of_containers` call (`Resolver::read_ahead`; each
//! event's `prefetch` then reads only what the chunk did not cover), and the store reads the edges those candidates may
//! connect, run by run, with the edges the jobs' live evidence is on (`Store::read_ahead_edges`: into a Neo4j
//! session's assertion buffer, nothing elsewhere). Per event, the lookup, the job's live evidence with its edges
//! (`prior_evidence`) and, for a START, the run's event states are independent, so `apply_resolved` reads them side by
//! side (`tokio::join!`): on Neo4j each is a round trip on its own connection. The `Resolver` keeps the best match in
//! each datastore that lists the namespace, then only those the caller can edit (seed 000): a dataset matching
//! containers in several writable datastores gives a connection for each; a dataset whose namespace a datastore lists
//! but with no writable match (a table not catalogued yet included) denies the event; a dataset no datastore lists
//! stays an external end. The relationship limit of 10,000 is checked again after this fan-out. An event's outcome is
//! `applied` (lineage or metadata changed), `recorded` (a RunEvent that changed none but recorded its run's state;
//! `mod.rs` `records_run_state`), `ignored`, `rejected`, `denied` or `failed`; `report::accepted` is the one list of
//! the taken ones. A dataset only an output's `columnLineage` names is paired with that output like an input
//! (`assertions_of`, evidence `impliedBy: columnLineage`), so table lineage agrees with column lineage. Registration
//! and replay converge with a clean ingest (`adopt.rs`, one path: `adopt_into`, the decision `lookup_dataset`'s): when
//! a dataset now resolves to a container (after `upsertContainer` and `upsertDatastore`, through `adopt_placeholders`
//! over `Store::external_placeholders`; in `Resolver::auto_create`; once per dataset a replay names), one
//! `apply_assertions` asserts its `ext:openlineage:` placeholder's live edges again on the container with their
//! evidence and retires them, then `Store::replace_io_ends` moves the jobs' and runs' entries and records the
//! `EXTERNAL_ADOPTED` change in the same transaction (last, so an interrupted adoption is finished by the next one;
//! with nothing left to move, nothing is recorded).

mod adopt;
mod assertions;
pub(crate) use assertions::job_key;
mod metadata;
mod prior;
mod recover;
mod report;
mod resolve;
mod runs;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Value};

pub use recover::PendingRange;
use report::Pending;
pub use report::{accepted, unresolved_json, EventReport, IngestReport, Unresolved};
pub use resolve::external_fqn;
use resolve::Resolver;

use super::{Caller, Lineage};
use crate::domain::{Id, StoredEvent};
use crate::error::{Error, Result};
use crate::ingest::openlineage::{self as ol, Event, EventKind, Limits, RunState};
use crate::store::{Store, StoreError};

pub const SOURCE_TYPE: &str = "openlineage";

/// Events applied in one store session (one transaction) at most: a bigger request commits
/// every this many, so it does not keep other writers waiting for its whole length (about a
/// third of a second at this size). A commit writes each page its events touched once, so a
/// page two halves of a request both touch is written once instead of twice: at the bench's
/// medium size, 1,000 events per session instead of 500 cut the commit's time per event by a
/// fifth (0.045 -> 0.035 ms; docs/benchmarks-history.md, issue #22, third stop).
const SESSION_EVENTS: usize = 1_000;

/// Events applied in one session at most where a concurrent writer can fail a session (Neo4j),
/// and the time after which it takes no more: it holds its locks (the id counters among them)
/// until its commit, so every other writer waits for it, and their calls have the store's time
/// limit (30 s by default, 10 s in the fault tests). Sessions run one at a time in a process
/// (two requests' sessions once deadlocked on the counters, and the loser's event-by-event
/// fallback on the winner's next sessions, until a loaded debug build answered 503), so a
/// writer waits for at most one. 2 s instead of 500 ms: a session's commit and job writes cost
/// about 150 ms whatever its length, and at 500 ms that was a quarter of the bench's ingest
/// time on Neo4j (BENCHMARKS, the Neo4j ingest section). A failed one is applied again event by
/// event. 1,000 rather than 200 (issue #44): each session costs about 25 statements whatever its
/// length, so a request of 1,000 events is now one session of them; the time counts only the
/// events' own work (see `ingest_chunk`), and the writes then take the commit's time.
const CONFLICTING_SESSION_EVENTS: usize = 1_000;
pub(super) const CONFLICTING_SESSION_TIME: std::time::Duration = std::time::Duration::from_millis(2_000);

/// An event of a request as `ingest_one` takes it: its validation, and its stored row with
/// whether it duplicates an earlier one.
type ChunkItem = (std::result::Result<Event, Vec<ol::ValidationIssue>>, (StoredEvent, bool));

/// A request's events validated and made into the rows the event log stores
/// (`Lineage::prepare_openlineage`), with who sent them.
#[derive(Clone)]
pub(crate) struct PreparedRequest {
    caller: Caller,
    validated: Vec<std::result::Result<Event, Vec<ol::ValidationIssue>>>,
    stored: Vec<StoredEvent>,
}

impl PreparedRequest {
    /// Its events.
    pub(crate) fn len(&self) -> usize {
        self.stored.len()
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

/// Why an event changed no lineage (its summary's `ignored_reason`, on `ignored` and `recorded`
/// events alike, which `openLineageEvents(ignoredReason:)` filters by): `duplicate` (set where
/// duplicates are found), `late START` (a START or RUNNING of a run that already failed or
/// aborted), `nothing resolved` (it names datasets, none of which resolved to a container), `no
/// lineage` (no inputs or no outputs to connect, and no metadata to apply), or `already known`
/// (what it asserts was all asserted before, or its connections have two unknown ends).
fn ignored_reason(event: &Event, late_start: bool, unresolved: &[Unresolved]) -> &'static str {
    let datasets = event.datasets().count();
    if late_start {
        "late START"
    } else if datasets > 0 && unresolved.iter().filter(|u| u.field.is_none()).count() >= datasets {
        "nothing resolved"
    } else if event.inputs.is_empty() || event.outputs.is_empty() {
        "no lineage"
    } else {
        "already known"
    }
}

/// Whether an event that changed no lineage recorded its run's state: a RunEvent with an
/// `eventType`, unless it is a START or RUNNING of a run that already ended (which the run's
/// terminal state outlives).
fn records_run_state(event: &Event, late_start: bool) -> bool {
    event.kind == EventKind::Run && event.run_id.is_some() && event.event_type.is_some() && !late_start
}

fn kind_name(kind: EventKind) -> &'static str {
    kind.as_str()
}

/// The event type that set the evidence; an event without one counts as OTHER.
fn state_name(state: Option<RunState>) -> &'static str {
    state.map(RunState::as_str).unwrap_or("OTHER")
}

/// A node an OpenLineage dataset identity denotes: a catalogued container or an external asset.
pub type DatasetNode = std::result::Result<crate::domain::Container, super::ExternalNode>;

impl Lineage {
    /// The node an OpenLineage dataset (namespace and name, by the naming conventions) denotes
    /// now: its container when catalogued, else the external asset its lineage was recorded
    /// under; `None` when neither. Reads only.
    pub async fn dataset_node(&self, namespace: &str, name: &str) -> Result<Option<DatasetNode>> {
        super::require_name("namespace", namespace)?;
        super::require_name("name", name)?;
        resolve::lookup_dataset(self, namespace, name).await
    }

    /// Stores, validates and applies each event in turn; one event's failure does not stop the rest.
    /// The request's events are stored in one transaction before any is applied, and their
    /// outcomes recorded in one transaction at the end.
    pub async fn ingest_openlineage(&self, caller: &Caller, events: Vec<Value>) -> Result<IngestReport> {
        let request = self.prepare_openlineage(caller, events);
        let mut answers = self.ingest_prepared(vec![request]).await;
        answers.pop().unwrap_or_else(|| Err(Error::Internal("an ingest request went unanswered".into())))
    }

    /// A request's events validated and made into the rows the event log stores, ready for
    /// `ingest_prepared` (alone or grouped with other requests').
    pub(crate) fn prepare_openlineage(&self, caller: &Caller, events: Vec<Value>) -> PreparedRequest {
        let limits = Limits::default();
        let now = crate::domain::now();
        let mut validated = Vec::with_capacity(events.len());
        let mut stored = Vec::with_capacity(events.len());
        for raw in events {
            let v = ol::validate(&raw, now, &limits);
            stored.push(stored_event(caller, raw, &v, now));
            validated.push(v);
        }
        PreparedRequest { caller: caller.clone(), validated, stored }
    }

    /// Ingests the events of one or more requests (the group commit's group: see
    /// `service::group_commit`) as one request of all their events would be: stored in one
    /// transaction before any is applied, applied in order in store sessions of up to
    /// `SESSION_EVENTS`, their outcomes recorded at each session's end. Each event is applied
    /// with its own request's caller and reported to its own request, so what one request's
    /// events meet (rejected, denied, a store failure) is theirs alone; an answer per request,
    /// in the order given.
    pub(crate) async fn ingest_prepared(&self, requests: Vec<PreparedRequest>) -> Vec<Result<IngestReport>> {
        let mut callers = Vec::with_capacity(requests.len());
        let mut owners: Vec<usize> = Vec::new();
        let mut validated = Vec::new();
        let mut stored = Vec::new();
        let mut kept = Vec::new();
        let grouped = requests.len() > 1;
        for (r, request) in requests.into_iter().enumerate() {
            owners.extend(std::iter::repeat_n(r, request.stored.len()));
            if grouped {
                // Kept to run the requests one by one should the grouped write fail.
                kept.push(request.clone());
            }
            callers.push(request.caller);
            validated.extend(request.validated);
            stored.extend(request.stored);
        }
        let count = stored.len();
        // Nothing is stored when this fails: the client must send the request again.
        let inserted = match self.store.insert_events(stored).await {
            Ok(inserted) => inserted,
            // A store that is down or too slow is so for each of them: no second try.
            Err(e) if grouped && !matches!(e, StoreError::Unavailable(_)) => {
                // What failed the group's write may be one request's alone: each on its own.
                tracing::warn!(error = %e, events = count, requests = kept.len(), "storing a group of OpenLineage requests failed; storing them one by one");
                let mut answers = Vec::with_capacity(kept.len());
                for request in kept {
                    let mut one = Box::pin(self.ingest_prepared(vec![request])).await;
                    answers.push(
                        one.pop().unwrap_or_else(|| Err(Error::Internal("an ingest request went unanswered".into()))),
                    );
                }
                return answers;
            }
            Err(e) => {
                tracing::error!(error = %e, events = count, "storing OpenLineage events failed");
                let e = Error::from(e);
                return callers.iter().map(|_| Err(e.clone())).collect();
            }
        };
        let mut report = IngestReport::default();
        // Where an event of this group went in `report`, for duplicates within the group.
        let mut seen: HashMap<Id, usize> = HashMap::new();
        // A session a concurrent writer can fail (Neo4j's) is kept short, and its chunk kept
        // to run again without it.
        let conflicts = self.store.session_conflicts();
        let (session_events, budget) = match conflicts {
            true => (CONFLICTING_SESSION_EVENTS, Some(self.ingest_session_time)),
            false => (SESSION_EVENTS, None),
        };
        // Each event with its index within its own request and its request.
        let mut index_in_request = vec![0usize; callers.len()];
        let mut items: VecDeque<(usize, usize, ChunkItem)> = validated
            .into_iter()
            .zip(inserted)
            .zip(owners.iter().copied())
            .map(|(item, owner)| {
                let index = index_in_request[owner];
                index_in_request[owner] += 1;
                (index, owner, item)
            })
            .collect();
        while !items.is_empty() {
            let take = items.len().min(session_events);
            let again: Option<Vec<_>> = conflicts.then(|| items.iter().take(take).cloned().collect());
            let first = report.events.len();
            let (session_failed, done) =
                self.ingest_chunk(&callers, &mut items, take, budget, true, &mut report, &mut seen).await;
            if let (true, Some(mut again)) = (session_failed, again) {
                // Each write alone is retried on a conflict, and what one event's failure
                // leaves is that event's alone.
                tracing::warn!(
                    events = done,
                    "applying OpenLineage events in one transaction failed; applying them one by one"
                );
                again.truncate(done);
                report.events.truncate(first);
                seen.retain(|_, i| *i < first);
                let mut again = VecDeque::from(again);
                self.ingest_chunk(&callers, &mut again, done, None, false, &mut report, &mut seen).await;
            }
        }
        // Each event's report to its own request (they come in the items' order).
        let mut reports: Vec<IngestReport> = callers.iter().map(|_| IngestReport::default()).collect();
        for (rep, owner) in report.events.into_iter().zip(owners) {
            reports[owner].events.push(rep);
        }
        reports
            .into_iter()
            .map(|report| {
                let failed = report.events.iter().filter(|e| e.unavailable).count();
                if failed > 0 {
                    // No 2xx for a request some of whose events the store could not take: the
                    // client's retry applies them (what did apply is then a duplicate, ignored).
                    return Err(Error::Unavailable(format!(
                        "{failed} of {} events could not be applied or recorded because the store is unavailable",
                        report.events.len()
                    )));
                }
                Ok(report)
            })
            .collect()
    }

    /// Applies up to `max` events from the front of `items` (in one store session when
    /// `in_session` and the store offers one; no more once `budget` has passed) and records
    /// their outcomes; their reports go to `report`. Whether a session failed part-way (an event
    /// failed on the store's error, or the outcomes or the commit could not be written: then
    /// none of them is committed), and how many events it took.
    #[allow(clippy::too_many_arguments)]
    async fn ingest_chunk(
        &self,
        callers: &[Caller],
        items: &mut VecDeque<(usize, usize, ChunkItem)>,
        max: usize,
        budget: Option<std::time::Duration>,
        in_session: bool,
        report: &mut IngestReport,
        seen: &mut HashMap<Id, usize>,
    ) -> (bool, usize) {
        let (session, lineage) = if in_session { self.session().await } else { (None, self.clone()) };
        let first = report.events.len();
        let mut pending = Pending::default();
        if session.is_some() {
            // The chunk's prior state in one read per kind (see `prior`), of the events it will
            // apply: the valid ones but duplicates of events applied, ignored or rejected before.
            let events: Vec<&Event> = items
                .iter()
                .take(max)
                .filter(|(_, _, (_, (stored, duplicate)))| {
                    !(*duplicate && (stored.status == "rejected" || accepted(&stored.status)))
                })
                .filter_map(|(_, _, (v, _))| v.as_ref().ok())
                .collect();
            pending.prior = prior::Prior::read(&lineage, &events).await;
            // The read ahead reads candidates, which do not depend on who asks.
            if let Some(caller) = items.front().and_then(|(_, owner, _)| callers.get(*owner)) {
                lineage.read_ahead(caller, &events, &mut pending).await;
            }
        }
        let mut forward = Vec::new();
        let mut last_caller: Option<&Caller> = None;
        // The budget is the events' own time, not the reads ahead: counted from the first event,
        // which is always applied. Counted from the chunk's start, reads ahead longer than the
        // budget left no time for any event, and the next chunk read the same again, forever.
        let started = std::time::Instant::now();
        for taken in 0..max {
            if taken > 0 && budget.is_some_and(|b| started.elapsed() >= b) {
                break;
            }
            let Some((index, owner, (v, (stored, duplicate)))) = items.pop_front() else { break };
            let Some(caller) = callers.get(owner) else { break };
            if last_caller.is_some_and(|c| c != caller) {
                // What a dataset resolved to is what this caller may edit of its matches.
                pending.known.forget_resolutions();
            }
            last_caller = Some(caller);
            let earlier = seen.get(&stored.id).map(|&i| &report.events[i]);
            let rep =
                lineage.ingest_one(caller, index, v, stored, duplicate, earlier, &mut pending, &mut forward).await;
            if let Some(id) = rep.id {
                seen.entry(id).or_insert(report.events.len());
            }
            report.events.push(rep);
            // The embedded store's calls run on this worker without yielding: let the
            // worker's other tasks in between events.
            tokio::task::yield_now().await;
        }
        // Outcomes not recorded or not committed because the store is down: those events
        // are not done (they stay `pending`), and the client must send them again.
        let flush_error = lineage.flush(&mut pending).await;
        let mut store_down = flush_error.as_ref().is_some_and(|e| matches!(e, StoreError::Unavailable(_)));
        let mut session_failed = false;
        if let Some(s) = session {
            session_failed = flush_error.is_some() || report.events[first..].iter().any(|r| r.status == "failed");
            if let Err(e) = s.commit_session().await {
                tracing::error!(error = %e, events = report.events.len() - first, "committing OpenLineage events failed");
                session_failed = true;
                store_down |= matches!(e, StoreError::Unavailable(_));
                forward.clear();
                for rep in report.events[first..].iter_mut().filter(|r| accepted(r.status)) {
                    rep.status = "failed";
                    rep.unavailable = store_down;
                    rep.errors.push((String::new(), "the store could not commit the event; retry".into()));
                }
            }
        }
        if store_down {
            report.events[first..].iter_mut().filter(|r| accepted(r.status)).for_each(|r| r.unavailable = true);
        }
        if let Some(f) = &self.forwarder {
            forward.iter().for_each(|raw| f.forward(raw));
        }
        (session_failed, report.events.len() - first)
    }

    /// A store session for a run of writes (their reads and writes in one transaction, one
    /// commit: a request's events, a chunk of SQL statements) and this service on it; without one
    /// (Neo4j, or the writer not free in time) each write commits alone.
    pub(in crate::service) async fn session(&self) -> (Option<Arc<dyn Store>>, Lineage) {
        match self.store.session().await {
            Ok(Some(s)) => (Some(s.clone()), Lineage { store: s, ..self.clone() }),
            Ok(None) => (None, self.clone()),
            Err(e) => {
                tracing::warn!(error = %e, "no store session; each write runs in its own transaction");
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
        if duplicate && accepted(status) {
            rep.status = "ignored";
            rep.summary = json!({"duplicate_of": stored.id, "original_status": status, "ignored_reason": "duplicate"});
            return rep;
        }
        let raw = stored.body;
        self.apply_stored(caller, &mut rep, stored.id, validated, pending).await;
        // Forwarded once committed.
        if self.forwarder.is_some() && accepted(rep.status) {
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
            Ok(assertions::Applied { summary, metadata, unresolved, late_start }) => {
                let changed = summary.edges_asserted + summary.edges_retired + summary.evidence_retired + metadata > 0;
                // A run event that changed no lineage still told its run's state (a FAIL fails
                // the run, turns its outputs FAILED); only a late START of an ended run, or an
                // event with no type, says nothing new.
                let recorded = !changed && records_run_state(&event, late_start);
                rep.status = match (changed, recorded) {
                    (true, _) => "applied",
                    (false, true) => "recorded",
                    (false, false) => "ignored",
                };
                // A recorded event says as an ignored one does why its lineage changed nothing
                // (`nothing resolved` finds the events to replay once their tables are registered).
                let reason = (!changed).then(|| ignored_reason(&event, late_start, &unresolved));
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
                if let Some(reason) = reason {
                    rep.summary["ignored_reason"] = json!(reason);
                }
                if recorded {
                    rep.summary["run_state"] = json!(state_name(event.event_type));
                }
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
                rep.unavailable = matches!(e, Error::Unavailable(_));
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
        progress: impl FnMut(&EventReport),
    ) -> Result<IngestReport> {
        self.replay_range(after, Id::MAX, statuses, progress).await
    }

    /// `replay_openlineage` of the events with ids in `after + 1..=until` only.
    async fn replay_range(
        &self,
        after: Id,
        until: Id,
        statuses: &[String],
        mut progress: impl FnMut(&EventReport),
    ) -> Result<IngestReport> {
        let limits = Limits::default();
        let mut report = IngestReport::default();
        let mut cursor = after;
        let mut pending = Pending::default();
        let mut adopted: std::collections::HashSet<(String, String)> = std::collections::HashSet::new();
        loop {
            let batch = self.store.events_after(cursor, 500).await?;
            let Some(last) = batch.last() else { break };
            cursor = last.id;
            // A session a concurrent writer can fail (Neo4j's: a replay runs beside new requests)
            // would fail the replay; there each event commits alone, retried on a conflict.
            let (session, lineage) =
                if self.store.session_conflicts() { (None, self.clone()) } else { self.session().await };
            for stored in batch.into_iter().take_while(|e| e.id <= until) {
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
                // Its datasets, to move what their external placeholders held once applied.
                let datasets: Vec<(String, String)> = validated
                    .as_ref()
                    .map(|e| e.datasets().map(|d| (d.namespace.clone(), d.name.clone())).collect())
                    .unwrap_or_default();
                lineage.apply_stored(&caller, &mut rep, stored.id, validated, &mut pending).await;
                if accepted(rep.status) {
                    // Once per dataset and replay: afterwards it resolves, so no later event
                    // adds to its placeholder.
                    for (namespace, name) in datasets {
                        if adopted.insert((namespace.clone(), name.clone())) {
                            lineage.adopt_placeholder(&namespace, &name).await?;
                        }
                    }
                }
                progress(&rep);
                report.events.push(rep);
                tokio::task::yield_now().await;
            }
            if let Some(e) = lineage.flush(&mut pending).await {
                return Err(e.into());
            }
            if let Some(s) = session {
                s.commit_session().await?;
            }
            if cursor >= until {
                break;
            }
        }
        Ok(report)
    }

    /// Records the queued outcomes (one transaction); the store's error when it could not.
    async fn flush(&self, pending: &mut Pending) -> Option<StoreError> {
        // The caches start afresh too: a replay flushes every few hundred events.
        let outcomes = std::mem::take(pending).outcomes;
        let n = outcomes.len();
        let e = self.store.finish_events(outcomes).await.err()?;
        tracing::error!(error = %e, events = n, "recording events' outcomes failed");
        Some(e)
    }

    /// Reads the candidate containers and fields of every dataset the chunk's events name, in
    /// one read each (`Resolver::read_ahead`). When a read fails, each event reads what is
    /// missing for itself (and meets the same trouble, which it reports as before).
    async fn read_ahead(&self, caller: &Caller, events: &[&Event], pending: &mut Pending) {
        let datastores = match pending.datastores(self).await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = e.message(), "listing datastores failed; resolving datasets per event");
                return;
            }
        };
        let mut resolver = Resolver::new(self, caller, datastores, std::mem::take(&mut pending.known));
        if let Err(e) = resolver.read_ahead(events).await {
            tracing::warn!(
                error = e.message(),
                events = events.len(),
                "reading a chunk's datasets ahead failed; reading them per event"
            );
        }
        pending.known = resolver.into_known().0;
        // And the edges those candidates may connect and those the chunk's jobs' evidence is
        // on, so each event's assertions read only what lies outside them (on Neo4j; see
        // `Store::read_ahead_edges`).
        // Only for a chunk of several events: one event's own lookup (`overlay_lookup`, by its
        // keys) costs a Neo4j session a quarter of the pairs' read (2.6 against 10 ms an event,
        // single-event requests from 8 clients, release, 2026-12-07), which pays only when shared.
        if events.len() < 2 {
            return;
        }
        let (pairs, edges) = (pending.known.pairs(events), pending.prior.evidence_edges());
        if let Err(e) = self.store.read_ahead_edges(&pairs, &edges).await {
            tracing::warn!(error = %e, pairs = pairs.len(), "reading a chunk's edges ahead failed");
        }
    }

    /// Resolves the event and applies its assertions and retirements in one transaction.
    async fn apply_event(
        &self,
        caller: &Caller,
        event_id: Id,
        event: &Event,
        pending: &mut Pending,
    ) -> Result<assertions::Applied> {
        let known = std::mem::take(&mut pending.known);
        let mut resolver = Resolver::new(self, caller, pending.datastores(self).await?, known);
        let out = self.apply_resolved(caller, event_id, event, pending, &mut resolver).await;
        let (known, datastores) = resolver.into_known();
        pending.known = known;
        if let Some(d) = datastores {
            pending.set_datastores(d);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk whose time budget is spent before its first event (its reads ahead took longer,
    /// as they can on a loaded Neo4j) still applies that event: the next chunk would read the
    /// same again and meet the same, and the request never finished.
    #[tokio::test]
    async fn a_chunk_past_its_budget_still_applies_its_first_event() {
        let dir = tempfile::tempdir().unwrap();
        let lineage = Lineage::new(Arc::new(crate::store::sqlite::SqliteStore::open(dir.path()).unwrap()));
        let events: Vec<Value> = (1..=3)
            .map(|i| {
                json!({
                    "eventType": "COMPLETE",
                    "eventTime": crate::domain::now().to_rfc3339(),
                    "producer": "https://example.com/test",
                    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                    "run": {"runId": format!("00000000-0000-4000-8000-00000000000{i}")},
                    "job": {"namespace": "etl", "name": format!("job{i}")},
                    "inputs": [],
                    "outputs": [],
                })
            })
            .collect();
        let request = lineage.prepare_openlineage(&Caller::system(), events);
        let inserted = lineage.store.insert_events(request.stored).await.unwrap();
        let mut items: VecDeque<(usize, usize, ChunkItem)> =
            request.validated.into_iter().zip(inserted).enumerate().map(|(i, item)| (i, 0, item)).collect();
        let (mut report, mut seen) = (IngestReport::default(), HashMap::new());
        let callers = [request.caller];
        let spent = Some(std::time::Duration::ZERO);
        let (failed, done) = lineage.ingest_chunk(&callers, &mut items, 3, spent, true, &mut report, &mut seen).await;
        assert!(!failed);
        assert_eq!(done, 1, "the first event of the chunk, and only it");
        assert_eq!(items.len(), 2);
        assert!(accepted(report.events[0].status), "{:?}", report.events[0]);
    }
}
