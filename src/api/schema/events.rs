//! Stored OpenLineage events, as `openLineageEvents` lists them.

use async_graphql::{Json, Object};

use super::scalars::{dt, odt, DateTime};
use crate::domain::{self, Id};

/// An OpenLineage event as stored, with what became of it.
pub struct StoredEvent(pub domain::StoredEvent);

#[Object]
impl StoredEvent {
    async fn id(&self) -> Id {
        self.0.id
    }
    /// `run_event`, `job_event`, `dataset_event` (or `unknown` when it did not validate).
    async fn kind(&self) -> &str {
        &self.0.kind
    }
    async fn status(&self) -> &str {
        crate::api::openlineage::public_status(&self.0.status)
    }
    async fn errors(&self) -> Json<serde_json::Value> {
        Json(self.0.errors.clone())
    }
    async fn summary(&self) -> Json<serde_json::Value> {
        Json(self.0.summary.clone())
    }
    async fn job_namespace(&self) -> Option<&str> {
        self.0.job_namespace.as_deref()
    }
    async fn job_name(&self) -> Option<&str> {
        self.0.job_name.as_deref()
    }
    async fn run_id(&self) -> Option<&str> {
        self.0.run_id.as_deref()
    }
    async fn event_type(&self) -> Option<&str> {
        self.0.event_type.as_deref()
    }
    async fn event_time(&self) -> Option<DateTime> {
        odt(self.0.event_time)
    }
    async fn received_at(&self) -> DateTime {
        dt(self.0.received_at)
    }
    async fn submitted_by(&self) -> Option<&str> {
        self.0.submitted_by.as_deref()
    }
    /// The event as received, unknown facets included.
    async fn body(&self) -> Json<serde_json::Value> {
        Json(self.0.body.clone())
    }
}
