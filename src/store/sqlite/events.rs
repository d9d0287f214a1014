//! The stored event log of the embedded store: events kept as received (unique by
//! fingerprint), their outcomes, and the reads of the log (a run's states, the paged list,
//! replay, purge).

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension};

use super::rows::{event_row, json_text, ts, EVENT_COLS};
use super::{select_page, select_rows, sql_err, Filter, Listing, STORE};
use crate::domain::{EventFilter, EventOutcome, Id, Page, PageRequest, StoredEvent, Timestamp};
use crate::metrics::store_query;
use crate::store::StoreResult;

pub(super) fn insert_event_row(tx: &Connection, e: &StoredEvent, keep_id: bool) -> rusqlite::Result<Id> {
    store_query(STORE, "insert_event");
    tx.prepare_cached(&format!(
        "INSERT INTO events ({EVENT_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    ))?
    .execute(params![
        if keep_id { Some(e.id) } else { None },
        e.fingerprint,
        e.kind,
        e.job_namespace,
        e.job_name,
        e.run_id,
        e.event_type,
        e.event_time.as_ref().map(ts),
        ts(&e.received_at),
        e.submitted_by,
        e.status,
        json_text(&e.errors),
        json_text(&e.summary),
        json_text(&e.body)
    ])?;
    Ok(tx.last_insert_rowid())
}

pub(super) fn insert_events(tx: &Connection, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
    let mut out = Vec::with_capacity(events.len());
    let mut lookup =
        tx.prepare_cached(&format!("SELECT {EVENT_COLS} FROM events WHERE fingerprint = ?1")).map_err(sql_err)?;
    for event in events {
        store_query(STORE, "event_by_fingerprint");
        match lookup.query_row(params![event.fingerprint], event_row).optional().map_err(sql_err)? {
            Some(existing) => out.push((existing, true)),
            None => {
                let id = insert_event_row(tx, &event, false).map_err(sql_err)?;
                out.push((StoredEvent { id, ..event }, false));
            }
        }
    }
    Ok(out)
}

pub(super) fn finish_events(tx: &Connection, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
    let mut stmt =
        tx.prepare_cached("UPDATE events SET status = ?2, errors = ?3, summary = ?4 WHERE id = ?1").map_err(sql_err)?;
    for o in outcomes {
        store_query(STORE, "finish_event");
        stmt.execute(params![o.id, o.status, json_text(&o.errors), json_text(&o.summary)]).map_err(sql_err)?;
    }
    Ok(())
}

pub(super) fn run_event_states(c: &Connection, run_id: &str) -> rusqlite::Result<Vec<(Id, String, Option<String>)>> {
    select_rows(
        c,
        "run_event_states",
        "SELECT id, status, event_type FROM events WHERE run_id = ?1 ORDER BY id",
        params![run_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Newest first.
const EVENTS: Listing =
    Listing { table: "events", cols: EVENT_COLS, order: "id DESC", count_op: "count_events", list_op: "list_events" };

pub(super) fn list_events(c: &Connection, f: &EventFilter, page: PageRequest) -> rusqlite::Result<Page<StoredEvent>> {
    let text = |v: &Option<String>| v.clone().map(SqlValue::Text);
    let mut w = Filter::default();
    w.when("status = ?", text(&f.status))
        .when("job_namespace = ?", text(&f.job_namespace))
        .when("job_name = ?", text(&f.job_name))
        .when("run_id = ?", text(&f.run_id))
        .when("received_at >= ?", f.since.as_ref().map(|t| SqlValue::Text(ts(t))))
        .when("received_at <= ?", f.until.as_ref().map(|t| SqlValue::Text(ts(t))))
        .when("instr(summary, ?) > 0", f.ignored_reason.as_ref().map(|r| SqlValue::Text(EventFilter::reason_text(r))));
    select_page(c, &EVENTS, &w.sql(), w.params, page, event_row)
}

pub(super) fn events_after(c: &Connection, after: Id, limit: i64) -> rusqlite::Result<Vec<StoredEvent>> {
    select_rows(
        c,
        "events_after",
        &format!("SELECT {EVENT_COLS} FROM events WHERE id > ?1 ORDER BY id LIMIT ?2"),
        params![after, limit],
        event_row,
    )
}

pub(super) fn purge_events(tx: &Connection, before: Timestamp) -> StoreResult<u64> {
    store_query(STORE, "purge_events");
    let n = tx.execute("DELETE FROM events WHERE received_at < ?1", params![ts(&before)]).map_err(sql_err)?;
    Ok(n as u64)
}

/// Marquez's `/events/lineage`: see `Store::events_by_event_time`.
pub(super) fn events_by_event_time(
    c: &Connection,
    w: &crate::domain::EventTimeWindow,
) -> rusqlite::Result<(Vec<StoredEvent>, i64)> {
    let mut f = Filter::default();
    f.always("event_time IS NOT NULL")
        .always("status <> 'rejected'")
        .when("event_time >= ?", w.after.as_ref().map(|t| SqlValue::Text(ts(t))))
        .when("event_time < ?", w.before.as_ref().map(|t| SqlValue::Text(ts(t))));
    store_query(STORE, "count_events_by_event_time");
    let total: i64 = c.query_row(
        &format!("SELECT count(*) FROM events WHERE {}", f.sql()),
        rusqlite::params_from_iter(&f.params),
        |r| r.get(0),
    )?;
    let order = if w.ascending { "event_time ASC, id ASC" } else { "event_time DESC, id DESC" };
    let (limit, offset) = (f.params.len() + 1, f.params.len() + 2);
    let sql = format!(
        "SELECT {EVENT_COLS} FROM events WHERE {} AND kind = 'run_event' ORDER BY {order} LIMIT ?{limit} OFFSET ?{offset}",
        f.sql()
    );
    let params = f.params.into_iter().chain([SqlValue::Integer(w.limit), SqlValue::Integer(w.offset)]);
    let items = select_rows(c, "events_by_event_time", &sql, rusqlite::params_from_iter(params), event_row)?;
    Ok((items, total))
}
