//! Jobs and runs: the model and the rules that fold an event's report into what is stored.
//!
//! A job is an OpenLineage job (namespace and name, its key); a run is one execution of it
//! (`runId`, its key). Both are recorded from the events that name them: each event gives a
//! [`RunRecord`], and a store folds it into the stored job and run with [`merge_job`],
//! [`merge_run`] and [`merge_io`], inside the event's transaction, so both stores keep the same
//! rules and events may arrive in any order:
//! - a job's facets take the values of its latest event that sent them;
//! - a run's state is its latest terminal state (COMPLETE, FAIL, ABORT) once it has one, else
//!   its latest state: a terminal state stays terminal, as the evidence's run state does;
//! - a run's inputs and outputs are the union of every event's, each with when it was last read
//!   or written; a job's are the union of its runs' and of its job events'.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{End, Id, Timestamp};

/// A run's state: the `eventType` of an OpenLineage RunEvent, the one type every layer reads
/// (the ingest's validated event, the stored run, GraphQL's `RunState`, Marquez's run states).
/// Each transport only spells it: the spec's and the stores' spelling is [`RunState::as_str`]
/// (`START`, `COMPLETE`, ...: the text of SQLite's `runs.state` and the Neo4j `Run.state`
/// property), GraphQL's enum is a remote derive of this one, Marquez's names are
/// [`RunState::marquez_name`].
///
/// States order by their names, the order the stored state histories were always sorted in
/// (a run's `states` ties on time break alphabetically), so what is stored stays byte for byte.
/// In serde (a dump's records) it is its name; a name it does not know reads as OTHER
/// ([`RunState::stored`]), as a store's does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RunState {
    Start,
    Running,
    Complete,
    Abort,
    Fail,
    Other,
}

impl RunState {
    pub const ALL: [RunState; 6] =
        [RunState::Start, RunState::Running, RunState::Complete, RunState::Abort, RunState::Fail, RunState::Other];

    /// The spec's spelling (upper case), the only one accepted.
    pub fn parse(s: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|state| state.as_str() == s)
    }

    /// A state as a store holds it. Every writer stores one of the six names; anything else (a
    /// value written by hand) reads as OTHER, as GraphQL and Marquez always showed it.
    pub fn stored(s: &str) -> RunState {
        RunState::parse(s).unwrap_or(RunState::Other)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Start => "START",
            RunState::Running => "RUNNING",
            RunState::Complete => "COMPLETE",
            RunState::Abort => "ABORT",
            RunState::Fail => "FAIL",
            RunState::Other => "OTHER",
        }
    }

    /// Whether the state ends a run.
    pub fn is_terminal(self) -> bool {
        matches!(self, RunState::Complete | RunState::Fail | RunState::Abort)
    }

    /// Whether the state is a run's failure (what leaves its outputs stale).
    pub fn is_failure(self) -> bool {
        matches!(self, RunState::Fail | RunState::Abort)
    }

    /// Marquez's name of the state (its `RunState`: NEW, RUNNING, COMPLETED, FAILED, ABORTED).
    /// OTHER says nothing about the run's progress: it has begun, so RUNNING.
    pub fn marquez_name(self) -> &'static str {
        match self {
            RunState::Start => "NEW",
            RunState::Running | RunState::Other => "RUNNING",
            RunState::Complete => "COMPLETED",
            RunState::Fail => "FAILED",
            RunState::Abort => "ABORTED",
        }
    }

    /// The states a Marquez name covers (case-insensitive; RUNNING is RUNNING and OTHER), none
    /// for a name Marquez does not have.
    pub fn of_marquez_name(name: &str) -> Vec<RunState> {
        let wanted = name.trim().to_ascii_uppercase();
        RunState::ALL.into_iter().filter(|s| s.marquez_name() == wanted).collect()
    }
}

impl<'de> Deserialize<'de> for RunState {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RunState::stored(&String::deserialize(d)?))
    }
}

impl Ord for RunState {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for RunState {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A job's identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobName {
    pub namespace: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: Id,
    pub namespace: String,
    pub name: String,
    pub processing_type: Option<String>,
    pub integration: Option<String>,
    pub job_type: Option<String>,
    pub description: Option<String>,
    pub owners: Vec<String>,
    /// The `sourceCodeLocation` facet's properties, as compact JSON object text.
    pub source_code_location: Option<String>,
    pub sql: Option<String>,
    pub parent_id: Option<Id>,
    pub root_id: Option<Id>,
    pub first_seen_at: Timestamp,
    pub last_seen_at: Timestamp,
    /// The run that began last (`Run::began`), and when: the job's latest run.
    pub latest_run_id: Option<Id>,
    pub latest_run_began: Option<Timestamp>,
}

/// Which jobs `list_jobs` returns (every filter given must hold).
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    pub namespace: Option<String>,
    /// A case-insensitive substring of the name, given lowercased.
    pub name: Option<String>,
    /// The state of the job's latest run.
    pub last_run_state: Option<RunState>,
    /// Jobs that read or write one of these containers.
    pub container_ids: Option<Vec<Id>>,
}

/// Which runs of a job `runs_of_job` returns: in a state, and beginning in a window.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub state: Option<RunState>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
}

/// One state a run reported, and when (the event's time).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunStateChange {
    pub at: Timestamp,
    pub state: RunState,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The store's own key, for restricted placeholders and paging; clients know `run_id`.
    pub id: Id,
    pub run_id: String,
    pub job_id: Id,
    /// The current state (see the module's rules).
    pub state: RunState,
    /// Every state reported, by time.
    pub states: Vec<RunStateChange>,
    pub started_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
    pub nominal_start: Option<Timestamp>,
    pub nominal_end: Option<Timestamp>,
    pub error_message: Option<String>,
    pub error_language: Option<String>,
    pub parent_run_id: Option<String>,
    /// The time of its first and latest event.
    pub first_seen_at: Timestamp,
    pub last_seen_at: Timestamp,
}

impl Run {
    pub fn duration_ms(&self) -> Option<i64> {
        Some((self.ended_at? - self.started_at?).num_milliseconds())
    }
    /// When the run began, as far as it is known: its start, else its first event.
    pub fn began(&self) -> Timestamp {
        self.started_at.unwrap_or(self.first_seen_at)
    }
}

/// Whether a run or job read or wrote a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoDirection {
    Read,
    Wrote,
}

impl IoDirection {
    pub fn as_str(self) -> &'static str {
        match self {
            IoDirection::Read => "read",
            IoDirection::Wrote => "wrote",
        }
    }
    pub fn parse(s: &str) -> Option<IoDirection> {
        match s {
            "read" => Some(IoDirection::Read),
            "wrote" => Some(IoDirection::Wrote),
            _ => None,
        }
    }
}

/// One dataset a run or job read or wrote: the node it resolved to (a container or an external
/// asset), the OpenLineage name it was sent as, and when it was last read or written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoEntry {
    pub direction: IoDirection,
    pub end: End,
    pub namespace: String,
    pub name: String,
    pub at: Timestamp,
    /// A job's written dataset only: its latest COMPLETE run that wrote it, and when it ended.
    pub completed: Option<(Id, Timestamp)>,
}

impl IoEntry {
    /// A dataset read or written at `at`, as an event or statement names it (not yet completed).
    pub fn new(direction: IoDirection, end: End, namespace: &str, name: &str, at: Timestamp) -> IoEntry {
        IoEntry { direction, end, namespace: namespace.to_string(), name: name.to_string(), at, completed: None }
    }
    /// The key an entry is unique by within its run or job.
    pub fn key(&self) -> (IoDirection, String) {
        (self.direction, self.end.key())
    }
}

/// What one event says about its job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobUpsert {
    pub name: JobName,
    pub processing_type: Option<String>,
    pub integration: Option<String>,
    pub job_type: Option<String>,
    pub description: Option<String>,
    /// Empty when the event sent no ownership.
    pub owners: Vec<String>,
    pub source_code_location: Option<String>,
    pub sql: Option<String>,
    pub parent: Option<JobName>,
    pub root: Option<JobName>,
    /// The event's time.
    pub seen_at: Timestamp,
}

impl JobUpsert {
    /// A job known only as another's parent or root.
    pub fn named(name: JobName, seen_at: Timestamp) -> JobUpsert {
        JobUpsert {
            name,
            processing_type: None,
            integration: None,
            job_type: None,
            description: None,
            owners: Vec::new(),
            source_code_location: None,
            sql: None,
            parent: None,
            root: None,
            seen_at,
        }
    }
}

/// What one RunEvent says about its run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunUpsert {
    pub run_id: String,
    /// The event type (`OTHER` when the event had none).
    pub state: RunState,
    pub at: Timestamp,
    /// A START this report stands for too, when it tells a whole run at once (a query log's row
    /// with its start and end time); OpenLineage events report each state on its own.
    pub start: Option<Timestamp>,
    pub nominal_start: Option<Timestamp>,
    pub nominal_end: Option<Timestamp>,
    pub error_message: Option<String>,
    pub error_language: Option<String>,
    pub parent_run_id: Option<String>,
}

/// What one event records about jobs and runs, applied in the event's transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub job: JobUpsert,
    /// RunEvents only.
    pub run: Option<RunUpsert>,
    /// The datasets the event read and wrote, resolved (the job's, and the run's when there is one).
    pub io: Vec<IoEntry>,
    /// The stored event.
    pub event_id: Id,
    /// The OpenLineage evidence key the event's edges are asserted under, so a store can tie the
    /// evidence to the run or job.
    pub evidence_key: String,
}

/// A run and its datasets as stored before an event (`run` is `None` when it is not stored).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KnownRun {
    pub run: Option<Run>,
    pub io: Vec<IoEntry>,
}

/// The job after an event: `old` (if stored) with the event's values. A value the event sent
/// replaces the stored one when the event is the job's latest; an older event only fills in
/// what is missing. `parent_id`/`root_id` are the ids of the event's parent and root jobs.
pub fn merge_job(old: Option<&Job>, new: &JobUpsert, id: Id, parent_id: Option<Id>, root_id: Option<Id>) -> Job {
    let Some(old) = old else {
        return Job {
            id,
            namespace: new.name.namespace.clone(),
            name: new.name.name.clone(),
            processing_type: new.processing_type.clone(),
            integration: new.integration.clone(),
            job_type: new.job_type.clone(),
            description: new.description.clone(),
            owners: new.owners.clone(),
            source_code_location: new.source_code_location.clone(),
            sql: new.sql.clone(),
            parent_id,
            root_id,
            first_seen_at: new.seen_at,
            last_seen_at: new.seen_at,
            latest_run_id: None,
            latest_run_began: None,
        };
    };
    let latest = new.seen_at >= old.last_seen_at;
    let pick = |stored: &Option<String>, sent: &Option<String>| match (latest, sent) {
        (true, Some(_)) => sent.clone(),
        _ => stored.clone().or_else(|| sent.clone()),
    };
    Job {
        id: old.id,
        namespace: old.namespace.clone(),
        name: old.name.clone(),
        processing_type: pick(&old.processing_type, &new.processing_type),
        integration: pick(&old.integration, &new.integration),
        job_type: pick(&old.job_type, &new.job_type),
        description: pick(&old.description, &new.description),
        owners: if (latest || old.owners.is_empty()) && !new.owners.is_empty() {
            new.owners.clone()
        } else {
            old.owners.clone()
        },
        source_code_location: pick(&old.source_code_location, &new.source_code_location),
        sql: pick(&old.sql, &new.sql),
        parent_id: if latest { parent_id.or(old.parent_id) } else { old.parent_id.or(parent_id) },
        root_id: if latest { root_id.or(old.root_id) } else { old.root_id.or(root_id) },
        first_seen_at: old.first_seen_at.min(new.seen_at),
        last_seen_at: old.last_seen_at.max(new.seen_at),
        latest_run_id: old.latest_run_id,
        latest_run_began: old.latest_run_began,
    }
}

/// Makes `run` the job's latest run when it began no earlier than the latest one so far (a
/// late event of an older run leaves the latest as it is).
pub fn note_run(job: &mut Job, run: &Run) {
    let began = run.began();
    if job.latest_run_id == Some(run.id) || job.latest_run_began.is_none_or(|b| began >= b) {
        job.latest_run_id = Some(run.id);
        job.latest_run_began = Some(began);
    }
}

/// The state a run is in after the states it reported: its latest terminal state once it has
/// one, else its latest state.
pub fn current_state(states: &[RunStateChange]) -> Option<&RunStateChange> {
    states.iter().filter(|s| s.state.is_terminal()).max_by_key(|s| s.at).or_else(|| states.iter().max_by_key(|s| s.at))
}

/// The run after an event: `old` (if stored) with the event's state and facets.
pub fn merge_run(old: Option<&Run>, new: &RunUpsert, id: Id, job_id: Id) -> Run {
    let mut states = old.map(|o| o.states.clone()).unwrap_or_default();
    let start = new.start.map(|at| RunStateChange { at, state: RunState::Start });
    for change in [Some(RunStateChange { at: new.at, state: new.state }), start].into_iter().flatten() {
        if !states.contains(&change) {
            states.push(change);
        }
    }
    states.sort();
    let current = current_state(&states).cloned().unwrap_or(RunStateChange { at: new.at, state: new.state });
    let started_at = states
        .iter()
        .filter(|s| s.state == RunState::Start)
        .map(|s| s.at)
        .min()
        .or_else(|| states.iter().filter(|s| s.state == RunState::Running).map(|s| s.at).min());
    let ended_at = current.state.is_terminal().then_some(current.at);
    let latest = old.is_none_or(|o| new.at >= o.last_seen_at);
    let pick = |stored: Option<&Option<String>>, sent: &Option<String>| match (latest, sent, stored) {
        (true, Some(_), _) | (_, _, None) => sent.clone(),
        (_, _, Some(stored)) => stored.clone().or_else(|| sent.clone()),
    };
    let pick_time = |stored: Option<Option<Timestamp>>, sent: Option<Timestamp>| match (latest, sent, stored) {
        (true, Some(_), _) | (_, _, None) => sent,
        (_, _, Some(stored)) => stored.or(sent),
    };
    Run {
        id: old.map_or(id, |o| o.id),
        run_id: new.run_id.clone(),
        job_id: old.map_or(job_id, |o| o.job_id),
        state: current.state,
        states,
        started_at,
        ended_at,
        nominal_start: pick_time(old.map(|o| o.nominal_start), new.nominal_start),
        nominal_end: pick_time(old.map(|o| o.nominal_end), new.nominal_end),
        // A failure's message stays with the run even when a later event has none.
        error_message: pick(old.map(|o| &o.error_message), &new.error_message),
        error_language: pick(old.map(|o| &o.error_language), &new.error_language),
        parent_run_id: pick(old.map(|o| &o.parent_run_id), &new.parent_run_id),
        first_seen_at: old.map_or(new.at, |o| o.first_seen_at.min(new.at)),
        last_seen_at: old.map_or(new.at, |o| o.last_seen_at.max(new.at)),
    }
}

/// The entries to write after an event: each of `new` not stored yet, or stored with an older
/// time (its time and name then move to the event's). Entries already as recent are left out.
pub fn merge_io(old: &[IoEntry], new: &[IoEntry]) -> Vec<IoEntry> {
    let stored: BTreeMap<(IoDirection, String), &IoEntry> = old.iter().map(|e| (e.key(), e)).collect();
    let mut out: BTreeMap<(IoDirection, String), IoEntry> = BTreeMap::new();
    for e in new {
        let k = e.key();
        if stored.get(&k).is_some_and(|s| s.at >= e.at) {
            continue;
        }
        match out.get(&k) {
            Some(prev) if prev.at >= e.at => {}
            _ => {
                out.insert(k, e.clone());
            }
        }
    }
    out.into_values().collect()
}

/// The health of a container: see `service::jobs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HealthState {
    Fresh,
    Failed,
    Stale,
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        chrono::DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default()
    }

    fn event(state: &str, at: i64) -> RunUpsert {
        RunUpsert {
            run_id: "r".into(),
            state: RunState::stored(state),
            at: t(at),
            start: None,
            nominal_start: None,
            nominal_end: None,
            error_message: None,
            error_language: None,
            parent_run_id: None,
        }
    }

    fn fold(events: &[RunUpsert]) -> Run {
        let mut run: Option<Run> = None;
        for e in events {
            run = Some(merge_run(run.as_ref(), e, 1, 1));
        }
        run.unwrap_or_else(|| merge_run(None, &event("OTHER", 0), 1, 1))
    }

    #[test]
    fn run_states_spell_and_map_to_marquez_both_ways() {
        for state in RunState::ALL {
            assert_eq!(RunState::parse(state.as_str()), Some(state));
            assert_eq!(RunState::stored(state.as_str()), state);
            assert_eq!(serde_json::to_value(state).ok(), Some(serde_json::json!(state.as_str())));
            assert!(RunState::of_marquez_name(state.marquez_name()).contains(&state));
        }
        for (ol, mq) in [
            (RunState::Start, "NEW"),
            (RunState::Running, "RUNNING"),
            (RunState::Complete, "COMPLETED"),
            (RunState::Fail, "FAILED"),
            (RunState::Abort, "ABORTED"),
            (RunState::Other, "RUNNING"),
        ] {
            assert_eq!(ol.marquez_name(), mq);
        }
        assert_eq!(RunState::of_marquez_name(" running"), [RunState::Running, RunState::Other]);
        assert!(RunState::of_marquez_name("DONE").is_empty());
        // Only the spec's spelling parses; a store's unknown value reads as OTHER.
        assert_eq!(RunState::parse("complete"), None);
        assert_eq!(RunState::stored("SKIPPED"), RunState::Other);
        assert_eq!(serde_json::from_str::<RunState>("\"SKIPPED\"").ok(), Some(RunState::Other));
        // Ordered by name, as stored histories were sorted.
        let mut all = RunState::ALL.to_vec();
        all.sort();
        let names: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["ABORT", "COMPLETE", "FAIL", "OTHER", "RUNNING", "START"]);
    }

    #[test]
    fn a_terminal_state_stays_terminal_whatever_the_order() {
        let events = [event("START", 0), event("RUNNING", 5), event("COMPLETE", 10)];
        let in_order = fold(&events);
        let reversed = fold(&[events[2].clone(), events[1].clone(), events[0].clone()]);
        for run in [&in_order, &reversed] {
            assert_eq!(run.state, RunState::Complete);
            assert_eq!(run.started_at, Some(t(0)));
            assert_eq!(run.ended_at, Some(t(10)));
            assert_eq!(run.duration_ms(), Some(10_000));
            assert_eq!(run.states.len(), 3);
        }
        // A late RUNNING after the end does not reopen it.
        let late = fold(&[event("START", 0), event("FAIL", 10), event("RUNNING", 20)]);
        assert_eq!(late.state, RunState::Fail);
        assert_eq!(late.ended_at, Some(t(10)));
        // Without a terminal state, the latest one.
        assert_eq!(fold(&[event("RUNNING", 5), event("START", 0)]).state, RunState::Running);
        // The same event twice is one state change.
        assert_eq!(fold(&[event("START", 0), event("START", 0)]).states.len(), 1);
    }

    #[test]
    fn a_whole_run_reported_at_once_has_its_start_and_end() {
        let mut whole = event("COMPLETE", 10);
        whole.start = Some(t(4));
        let run = fold(&[whole.clone()]);
        assert_eq!((run.state.as_str(), run.started_at, run.ended_at), ("COMPLETE", Some(t(4)), Some(t(10))));
        assert_eq!(run.duration_ms(), Some(6_000));
        // Reported again (a log imported twice): the same two states.
        assert_eq!(fold(&[whole.clone(), whole]).states, run.states);
        assert_eq!(run.states.len(), 2);
    }

    #[test]
    fn a_failures_message_stays() {
        let mut fail = event("FAIL", 10);
        fail.error_message = Some("boom".into());
        let run = fold(&[event("START", 0), fail, event("OTHER", 20)]);
        assert_eq!(run.error_message.as_deref(), Some("boom"));
    }

    #[test]
    fn the_latest_event_gives_a_jobs_facets() {
        let name = JobName { namespace: "n".into(), name: "j".into() };
        let mut first = JobUpsert::named(name.clone(), t(10));
        first.description = Some("new".into());
        let job = merge_job(None, &first, 7, None, None);
        let mut older = JobUpsert::named(name, t(0));
        older.description = Some("old".into());
        older.sql = Some("select 1".into());
        let job = merge_job(Some(&job), &older, 0, None, None);
        assert_eq!(job.id, 7);
        assert_eq!(job.description.as_deref(), Some("new"));
        assert_eq!(job.sql.as_deref(), Some("select 1"));
        assert_eq!((job.first_seen_at, job.last_seen_at), (t(0), t(10)));
    }

    #[test]
    fn io_moves_forward_only() {
        let e = |at: i64| IoEntry {
            direction: IoDirection::Read,
            end: End::Container { id: 1 },
            namespace: "n".into(),
            name: "a".into(),
            at: t(at),
            completed: None,
        };
        assert!(merge_io(&[e(10)], &[e(5)]).is_empty());
        assert_eq!(merge_io(&[e(5)], &[e(10), e(7)]), [e(10)]);
    }
}
