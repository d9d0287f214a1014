//! The event log on Neo4j: one `:Event` node per received event, unique by `id` and by
//! `fingerprint`, ids from the `event` counter.

use neo4rs::Txn;

use super::rows::{event_row, list, EventProps};
use super::{allocate, exec, first_id, Cmd, EVENT_COUNTER};
use crate::domain::StoredEvent;
use crate::store::StoreResult;

/// The stored event with this fingerprint, if any.
pub(super) async fn event_by_fingerprint(txn: &mut Txn, fingerprint: &str) -> StoreResult<Option<StoredEvent>> {
    let found = exec(txn, cypher!("event_by_fingerprint").param("fingerprint", fingerprint.to_string()))
        .await?
        .decode::<EventProps>("event")?;
    Ok(found.into_iter().next())
}

/// Looks the fingerprint up and creates the event when it is new, in the caller's transaction.
/// The create is a MERGE on the fingerprint, so a duplicate committed meanwhile by another
/// transaction is matched (and returned) rather than created again. Like the embedded store, a
/// created event is returned as given, with its new id.
pub(super) async fn insert_event_in(txn: &mut Txn, event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
    if let Some(existing) = event_by_fingerprint(txn, &event.fingerprint).await? {
        return Ok((existing, true));
    }
    let id = first_id(&allocate(txn, &[(EVENT_COUNTER, 1)]).await?, EVENT_COUNTER)?;
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
pub(super) async fn insert_events_in(txn: &mut Txn, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let first = first_id(&allocate(txn, &[(EVENT_COUNTER, events.len())]).await?, EVENT_COUNTER)?;
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
