//! Group commit of OpenLineage requests (issue #44, item 2). Most producers
//! (`openlineage-python`, the Airflow and Spark integrations) send one event per request, and a
//! request's fixed costs (its event-log write, its store session's BEGIN and commit, the
//! session's job, run and change-log writes: on Neo4j about 150 ms whatever its length) dwarf
//! one event's own. So small requests are not ingested one by one: they queue for one writer
//! task, which takes every request waiting when it is free (up to `GroupConfig::max_events`
//! events) and ingests them as one group (`Lineage::ingest_prepared`): one event-log write, then
//! one store session per chunk, then each request answered with its own events' reports once
//! its events are applied and their outcomes recorded. Requests that arrive while a group is
//! written join the next one.
//!
//! The writer waits for company only as long as concurrency says it will come: it waits (at
//! most `GroupConfig::wait`) until as many requests as made up its last group are in, so a lone
//! client pays no wait and 8 concurrent clients are grouped 8 at a time.
//!
//! What stays as it was: the event log is the durable point (a request is answered only after
//! its events are stored and applied, so a crash loses nothing acknowledged and the restart's
//! recovery applies what was stored and pending); each event is applied with its own request's
//! caller, in order, and reported to its own request; a group whose session fails on a
//! conflict is applied again event by event (`Store::session_conflicts`), and a group whose
//! event-log write fails is stored request by request. A request of `max_events` or more gains
//! nothing from company and runs straight, beside the writer, as before.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::openlineage::{IngestReport, PreparedRequest};
use super::{Caller, Lineage};
use crate::error::{Error, Result};

/// How requests are grouped (`serve --ingest-group-events`, `--ingest-group-wait-ms`).
#[derive(Debug, Clone, Copy)]
pub struct GroupConfig {
    /// Events in one group at most; a request of this many or more runs alone. 0 or 1: no
    /// grouping.
    pub max_events: usize,
    /// How long the writer waits at most for the requests it expects to join a group.
    pub wait: Duration,
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig { max_events: 1_000, wait: Duration::from_millis(5) }
    }
}

/// A request waiting for the writer, and where its answer goes.
struct Job {
    request: PreparedRequest,
    reply: oneshot::Sender<Result<IngestReport>>,
}

/// The queue of one server's OpenLineage requests to the writer task (started on the first
/// request, so it runs on the server's runtime; it ends when the server's state is dropped).
#[derive(Clone)]
pub struct GroupCommit {
    config: GroupConfig,
    queue: Arc<OnceLock<mpsc::UnboundedSender<Job>>>,
}

impl GroupCommit {
    pub fn new(config: GroupConfig) -> Self {
        GroupCommit { config, queue: Arc::new(OnceLock::new()) }
    }

    /// Ingests one request's events, grouped with the requests that wait beside it; the same
    /// answer as `Lineage::ingest_openlineage` would give it alone.
    pub async fn ingest(&self, lineage: &Lineage, caller: &Caller, events: Vec<Value>) -> Result<IngestReport> {
        if events.len() >= self.config.max_events || events.is_empty() {
            return lineage.ingest_openlineage(caller, events).await;
        }
        // Validation in the request's own task, so the writer only writes.
        let request = lineage.prepare_openlineage(caller, events);
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(writer(lineage.clone(), rx, self.config));
            tx
        });
        let (reply, answer) = oneshot::channel();
        queue
            .send(Job { request, reply })
            .map_err(|_| Error::Unavailable("the ingest writer has stopped; retry".into()))?;
        answer.await.unwrap_or_else(|_| Err(Error::Internal("the ingest writer dropped a request".into())))
    }
}

/// The writer: takes the waiting requests as a group, ingests them, answers each; until every
/// sender is gone. The groups it ran.
async fn writer(lineage: Lineage, mut queue: mpsc::UnboundedReceiver<Job>, config: GroupConfig) -> usize {
    let mut groups = 0;
    let mut carried: Option<Job> = None;
    // Requests in the last group: how many to wait for in the next.
    let mut expected = 1usize;
    loop {
        let first = match carried.take() {
            Some(job) => job,
            None => match queue.recv().await {
                Some(job) => job,
                None => return groups,
            },
        };
        let mut events = first.request.len();
        let mut jobs = vec![first];
        let deadline = tokio::time::Instant::now() + config.wait;
        while events < config.max_events {
            let next = match queue.try_recv() {
                Ok(job) => Some(job),
                Err(mpsc::error::TryRecvError::Empty) if jobs.len() < expected => {
                    tokio::time::timeout_at(deadline, queue.recv()).await.ok().flatten()
                }
                Err(_) => None,
            };
            let Some(job) = next else { break };
            if events + job.request.len() > config.max_events {
                carried = Some(job);
                break;
            }
            events += job.request.len();
            jobs.push(job);
        }
        expected = jobs.len();
        groups += 1;
        let (requests, replies): (Vec<_>, Vec<_>) = jobs.into_iter().map(|j| (j.request, j.reply)).unzip();
        crate::metrics::metrics().ingest_group_requests.observe(requests.len() as f64);
        // Its own task: a panic fails this group's requests, not the writer.
        let group = lineage.clone();
        let answers = match tokio::spawn(async move { group.ingest_prepared(requests).await }).await {
            Ok(answers) => answers,
            Err(e) => {
                tracing::error!(error = %e, "ingesting a group of OpenLineage requests panicked");
                Vec::new()
            }
        };
        let mut answers = answers.into_iter();
        for reply in replies {
            let answer = answers.next().unwrap_or_else(|| Err(Error::Internal("the request's group failed".into())));
            // A client that went away does not hear its answer; its events are stored and applied.
            let _ = reply.send(answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(state: &str, run: &str, minutes_ago: i64) -> Value {
        static NOW: OnceLock<chrono::DateTime<chrono::Utc>> = OnceLock::new();
        let now = *NOW.get_or_init(chrono::Utc::now);
        json!({
            "eventType": state,
            "eventTime": (now - chrono::Duration::minutes(minutes_ago)).to_rfc3339(),
            "producer": "https://example.com/test",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run},
            "job": {"namespace": "etl", "name": "group"},
            "inputs": [],
            "outputs": [],
        })
    }

    /// A group of two callers' requests about the same tables: the editor's event applies and
    /// the viewer's is denied with the same report it gets when sent alone (what a dataset
    /// resolves to is what the caller may edit of it, so one caller's resolutions must not
    /// serve the other's events).
    #[tokio::test]
    async fn each_request_of_a_group_applies_with_its_own_callers_rights() {
        use crate::auth::{Permission, Role};
        use crate::domain::{ContainerInput, DatastoreInput};
        async fn store_with_tables() -> (tempfile::TempDir, Lineage, crate::domain::Id) {
            let dir = tempfile::tempdir().unwrap();
            let lineage = Lineage::new(Arc::new(crate::store::sqlite::SqliteStore::open(dir.path()).unwrap()));
            let system = Caller::system();
            let input = DatastoreInput {
                name: "wh".into(),
                kind: "warehouse".into(),
                namespaces: vec!["postgres://db:5432".into()],
                ..Default::default()
            };
            let ds = lineage.upsert_datastore(&system, input).await.unwrap();
            for name in ["public.a", "public.b"] {
                let input = ContainerInput { datastore_id: ds.id, name: name.into(), ..Default::default() };
                lineage.upsert_container(&system, input).await.unwrap();
            }
            (dir, lineage, ds.id)
        }
        let caller = |user: &str, ds, permission| Caller {
            user: user.into(),
            role: Role::Member,
            unrestricted_admin: false,
            permissions: std::collections::HashMap::from([(ds, permission)]),
        };
        let copy = |job: &str, run: &str| {
            let mut e = event("COMPLETE", run, 1);
            e["job"]["name"] = json!(job);
            e["inputs"] = json!([{"namespace": "postgres://db:5432", "name": "public.a"}]);
            e["outputs"] = json!([{"namespace": "postgres://db:5432", "name": "public.b"}]);
            e
        };
        let (editor_event, viewer_event) = (
            copy("by_editor", "00000000-0000-4000-8000-0000000000e1"),
            copy("by_viewer", "00000000-0000-4000-8000-0000000000e2"),
        );

        // The viewer's request alone.
        let (_dir, lineage, ds) = store_with_tables().await;
        let viewer = caller("viewer", ds, Permission::Viewer);
        let alone = lineage.ingest_openlineage(&viewer, vec![viewer_event.clone()]).await.unwrap();

        // The editor's and the viewer's requests in one group, the editor's first.
        let (_dir, lineage, ds) = store_with_tables().await;
        let (editor, viewer) = (caller("editor", ds, Permission::Editor), caller("viewer", ds, Permission::Viewer));
        let (queue, waiting) = mpsc::unbounded_channel();
        let mut answers = Vec::new();
        for (who, e) in [(&editor, editor_event), (&viewer, viewer_event)] {
            let (reply, answer) = oneshot::channel();
            let request = lineage.prepare_openlineage(who, vec![e]);
            queue.send(Job { request, reply }).map_err(|_| "queue closed").unwrap();
            answers.push(answer);
        }
        drop(queue);
        assert_eq!(writer(lineage.clone(), waiting, GroupConfig::default()).await, 1, "one group");
        let editor_report = answers.remove(0).await.unwrap().unwrap();
        let viewer_report = answers.remove(0).await.unwrap().unwrap();
        assert_eq!(editor_report.events[0].status, "applied", "{:?}", editor_report.events[0]);
        let seen = |r: &IngestReport| (r.events[0].status, r.events[0].errors.clone());
        assert_ne!(alone.events[0].status, "applied", "{:?}", alone.events[0]);
        assert_eq!(seen(&viewer_report), seen(&alone), "the viewer's event in the group as alone");
    }

    /// Requests waiting when the writer is free are one group; each is answered with its own
    /// events' reports (its indexes, its statuses), and one request's rejected event leaves the
    /// others' applied, in order (a run's START, then its COMPLETE from a later request).
    #[tokio::test]
    async fn waiting_requests_are_one_group_and_each_hears_its_own_events() {
        let dir = tempfile::tempdir().unwrap();
        let lineage = Lineage::new(Arc::new(crate::store::sqlite::SqliteStore::open(dir.path()).unwrap()));
        let run = "00000000-0000-4000-8000-000000000001";
        let bodies = vec![
            vec![event("START", run, 10)],
            vec![json!({"eventType": "START", "run": {"runId": "not a uuid"}})],
            vec![event("COMPLETE", run, 5), event("COMPLETE", run, 5)],
        ];
        let (queue, waiting) = mpsc::unbounded_channel();
        let mut answers = Vec::new();
        for events in bodies {
            let (reply, answer) = oneshot::channel();
            let request = lineage.prepare_openlineage(&Caller::system(), events);
            queue.send(Job { request, reply }).map_err(|_| "queue closed").unwrap();
            answers.push(answer);
        }
        drop(queue);
        assert_eq!(writer(lineage.clone(), waiting, GroupConfig::default()).await, 1, "one group");
        let mut reports = Vec::new();
        for answer in answers {
            reports.push(answer.await.unwrap().unwrap());
        }
        let statuses: Vec<Vec<(usize, &str)>> =
            reports.iter().map(|r| r.events.iter().map(|e| (e.index, e.status)).collect()).collect();
        assert_eq!(statuses, vec![vec![(0, "recorded")], vec![(0, "rejected")], vec![(0, "recorded"), (1, "ignored")]]);
        assert_eq!(reports[2].events[1].summary["ignored_reason"], "duplicate", "{:?}", reports[2].events[1]);
        let runs = lineage.store.runs_by_run_ids(&[run.to_string()]).await.unwrap();
        let states: Vec<&str> = runs[0].states.iter().map(|s| s.state.as_str()).collect();
        assert_eq!((runs[0].state.as_str(), states), ("COMPLETE", vec!["START", "COMPLETE"]));
    }
}
