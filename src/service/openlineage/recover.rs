//! Finishing at start what a previous process left undone: events stored (status `pending`)
//! but not applied when it died (`kill -9`, a crash, the machine going down mid-request). Their
//! clients got no 2xx for them, so they may send them again; applying them here as well is
//! safe, since applying an event twice changes nothing.

use super::{EventReport, Lineage};
use crate::domain::{EventFilter, Id, PageRequest, Timestamp};
use crate::error::Result;

/// The stored status of an event not applied yet.
const PENDING: &str = "pending";

/// The oldest and newest pending event ids, and how many there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingRange {
    pub first: Id,
    pub last: Id,
    pub count: i64,
}

impl Lineage {
    /// The events received before `before` and still pending, `None` when there are none. With
    /// `before` the start of this process, that is what earlier processes left, not the events
    /// of requests being ingested right now.
    pub async fn pending_openlineage(&self, before: Timestamp) -> Result<Option<PendingRange>> {
        let filter = EventFilter { status: Some(PENDING.into()), until: Some(before), ..EventFilter::default() };
        // Newest first: page 1 of size 1 is the newest, page `total` the oldest.
        let newest = self.store.list_events(&filter, PageRequest { page: 1, size: 1 }).await?;
        let Some(last) = newest.items.first().map(|e| e.id) else { return Ok(None) };
        let count = newest.total;
        let oldest = self.store.list_events(&filter, PageRequest { page: count.max(1), size: 1 }).await?;
        let first = oldest.items.first().map(|e| e.id).unwrap_or(last).min(last);
        Ok(Some(PendingRange { first, last, count }))
    }

    /// Applies the pending events of `range`, oldest first, as `replay --status pending` would;
    /// `progress` hears each one.
    pub async fn finish_pending_openlineage(
        &self,
        range: PendingRange,
        progress: impl FnMut(&EventReport),
    ) -> Result<super::IngestReport> {
        self.replay_range(range.first - 1, range.last, &[PENDING.to_string()], progress).await
    }
}
