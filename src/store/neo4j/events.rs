//! The event log on Neo4j: one `:Event` node per received event, unique by `id` and by
//! `fingerprint`, ids from the `event` counter. Events are stored as received (deduplicated by
//! fingerprint), given their outcome once applied, listed, replayed in id order and purged by age.

use neo4rs::Txn;

use super::rows::{event_row, json_string, list, map, ts, EventProps};
use super::tx::Tx;
use super::{exec, first_id, internal, Cmd, Neo4jStore, Run, EVENT_COUNTER};
use crate::domain::{EventFilter, EventOutcome, Id, Page, PageRequest, StoredEvent, Timestamp};
use crate::store::{StoreError, StoreResult};

/// The lookup and the create run in one transaction; a concurrent insert of the same
/// fingerprint is matched by the create's MERGE, and should the constraint still refuse the
/// create, the event that won is read and returned as the existing one.
pub(super) async fn insert_event(store: &Neo4jStore, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
    let fingerprint = event.fingerprint.clone();
    match write_txn!(store, |txn| insert_event_in(txn, event.clone())) {
        Err(StoreError::Conflict(message)) => match write_txn!(store, |txn| event_by_fingerprint(txn, &fingerprint))? {
            Some(existing) => Ok((existing, true)),
            None => Err(StoreError::Conflict(message)),
        },
        other => other,
    }
}

pub(super) async fn insert_events(
    store: &Neo4jStore,
    events: Vec<StoredEvent>,
) -> StoreResult<Vec<(StoredEvent, bool)>> {
    let events = std::sync::Arc::new(events);
    let all = events.clone();
    match write_txn!(store, |txn| insert_events_in(txn, all.to_vec())) {
        // A concurrent request created one of these meanwhile: one event at a time instead.
        Err(StoreError::Conflict(_)) => {
            let mut out = Vec::with_capacity(events.len());
            for e in events.iter() {
                out.push(insert_event(store, e.clone()).await?);
            }
            Ok(out)
        }
        other => other,
    }
}

/// The stored event with this fingerprint, if any.
async fn event_by_fingerprint(txn: &mut Txn, fingerprint: &str) -> StoreResult<Option<StoredEvent>> {
    let found = exec(txn, cypher!("event_by_fingerprint").param("fingerprint", fingerprint.to_string()))
        .await?
        .decode::<EventProps>("event")?;
    Ok(found.into_iter().next())
}

/// Looks the fingerprint up and creates the event when it is new, in the caller's transaction.
/// The create is a MERGE on the fingerprint, so a duplicate committed meanwhile by another
/// transaction is matched (and returned) rather than created again. Like the embedded store, a
/// created event is returned as given, with its new id.
async fn insert_event_in(txn: &mut Tx<'_>, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
    if let Some(existing) = event_by_fingerprint(txn, &event.fingerprint).await? {
        return Ok((existing, true));
    }
    let id = first_id(&txn.allocate(&[(EVENT_COUNTER, 1)]).await?, EVENT_COUNTER)?;
    let event = StoredEvent { id, ..event };
    let out = exec(txn, cypher!("insert_event").param("row", event_row(&event)?)).await?;
    if out.value::<bool>("created")? {
        Ok((event, false))
    } else {
        Ok((out.decode_first::<EventProps>("event")?, true))
    }
}

/// Creates a list of events in the caller's transaction: one id block, one MERGE statement.
/// Ids allocated for events that turn out to exist stay unused (ids are never reused anyway).
async fn insert_events_in(txn: &mut Tx<'_>, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let first = first_id(&txn.allocate(&[(EVENT_COUNTER, events.len())]).await?, EVENT_COUNTER)?;
    let events: Vec<StoredEvent> = events.into_iter().zip(first..).map(|(e, id)| StoredEvent { id, ..e }).collect();
    let rows = events.iter().map(event_row).collect::<StoreResult<Vec<_>>>()?;
    let out = exec(txn, cypher!("insert_events").param("rows", list(rows))).await?;
    let created: Vec<bool> = out.column("created")?;
    let stored = out.decode::<EventProps>("event")?;
    Ok(events
        .into_iter()
        .zip(created.into_iter().zip(stored))
        .map(|(mine, (created, found))| if created { (mine, false) } else { (found, true) })
        .collect())
}

pub(super) async fn finish_events(mut db: impl Run, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
    if outcomes.is_empty() {
        return Ok(());
    }
    let rows = outcomes
        .into_iter()
        .map(|o| {
            Ok(map([
                ("id", o.id.into()),
                ("status", o.status.into()),
                ("errors", json_string(&o.errors)?.into()),
                ("summary", json_string(&o.summary)?.into()),
            ]))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    db.run(cypher!("finish_events").param("rows", list(rows))).await.map(|_| ())
}

pub(super) async fn finish_event(
    mut db: impl Run,
    id: Id,
    status: &str,
    errors: serde_json::Value,
    summary: serde_json::Value,
) -> StoreResult<()> {
    db.run(
        cypher!("finish_event")
            .param("id", id)
            .param("status", status.to_string())
            .param("errors", json_string(&errors)?)
            .param("summary", json_string(&summary)?),
    )
    .await
    .map(|_| ())
}

pub(super) async fn run_event_states(mut db: impl Run, run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
    let rows = db.run(cypher!("run_event_states").param("run_id", run_id)).await?;
    let ids: Vec<Id> = rows.column("id")?;
    let statuses: Vec<String> = rows.column("status")?;
    let types: Vec<Option<String>> = rows.column("event_type")?;
    Ok(ids.into_iter().zip(statuses).zip(types).map(|((i, s), t)| (i, s, t)).collect())
}

pub(super) async fn runs_event_states(
    mut db: impl Run,
    run_ids: &[String],
) -> StoreResult<Vec<(String, Id, String, Option<String>)>> {
    if run_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = db.run(cypher!("runs_event_states").param("run_ids", run_ids.to_vec())).await?;
    let runs: Vec<String> = rows.column("run_id")?;
    let ids: Vec<Id> = rows.column("id")?;
    let statuses: Vec<String> = rows.column("status")?;
    let types: Vec<Option<String>> = rows.column("event_type")?;
    Ok(runs.into_iter().zip(ids).zip(statuses).zip(types).map(|(((r, i), s), t)| (r, i, s, t)).collect())
}

pub(super) async fn list_events(
    mut db: impl Run,
    filter: &EventFilter,
    page: PageRequest,
) -> StoreResult<Page<StoredEvent>> {
    let cmd = if filter.run_id.is_some() { cypher!("list_events_of_run") } else { cypher!("list_events") };
    db.run(
        cmd.param("status", filter.status.clone())
            .param("job_namespace", filter.job_namespace.clone())
            .param("job_name", filter.job_name.clone())
            .param("run_id", filter.run_id.clone())
            .param("since", filter.since.as_ref().map(ts))
            .param("until", filter.until.as_ref().map(ts))
            .param("reason", filter.ignored_reason.as_deref().map(EventFilter::reason_text))
            .param("skip", page.offset())
            .param("limit", page.size),
    )
    .await?
    .page::<EventProps>(page)
}

/// A negative `limit` means no limit (SQLite's `LIMIT -1`).
pub(super) async fn events_after(mut db: impl Run, after: Id, limit: i64) -> StoreResult<Vec<StoredEvent>> {
    let limit = if limit < 0 { i64::MAX } else { limit };
    db.run(cypher!("events_after").param("after", after).param("limit", limit)).await?.decode::<EventProps>("event")
}

pub(super) async fn purge_events(mut db: impl Run, before: Timestamp) -> StoreResult<u64> {
    let deleted: i64 = db.run(cypher!("purge_events").param("before", ts(&before))).await?.value("deleted")?;
    u64::try_from(deleted).map_err(|_| internal("purge_events", format!("negative count {deleted}")))
}

/// Marquez's `/events/lineage`: see `Store::events_by_event_time`.
pub(super) async fn events_by_event_time(
    mut db: impl Run,
    w: &crate::domain::EventTimeWindow,
) -> StoreResult<(Vec<StoredEvent>, i64)> {
    let rows = db
        .run(
            cypher!("events_by_event_time")
                .param("after", w.after.as_ref().map(ts))
                .param("before", w.before.as_ref().map(ts))
                .param("ascending", w.ascending)
                .param("skip", w.offset)
                .param("limit", w.limit),
        )
        .await?;
    let items: Vec<EventProps> = rows.value("items")?;
    let items = items.into_iter().map(super::rows::Decode::decode).collect::<StoreResult<_>>()?;
    Ok((items, rows.value("total")?))
}
