//! The change feed over GraphQL: `LineageChange` and `ChangePage` (what the `changes` query
//! pages through), and `SubscriptionRoot` with `lineageChanged`, served over websockets
//! (`api::subscriptions`). Both wrap `service::changes`; the edge of a change resolves as every
//! `LineageEdge` does, so evidence details follow the same VIEWER rule as queries.

use std::sync::Arc;

use async_graphql::{Context, Enum, ErrorExtensions, Json, Object, SimpleObject, Subscription};
use futures_util::{Stream, StreamExt};

use super::scalars::dt;
use super::{caller, lineage, DateTime, LineageEdge};
use crate::api::loaders::Loaders;
use crate::domain::{self, Id};
use crate::error::Error;
use crate::service::changes::{ChangeItem, Followed, MAX_BACKLOG};

/// What a change did.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "domain::ChangeKind")]
pub enum ChangeKind {
    /// A new edge (its first assertion, or `createEdge`).
    EdgeAsserted,
    /// A live edge retired.
    EdgeRetired,
    /// A retired edge asserted again.
    EdgeRevived,
    /// An edge's source type, description or operation changed (`detail` has before and after).
    EdgeRelabelled,
    /// An edge removed for good (a manual edge's delete).
    EdgeDeleted,
    ContainerCreated,
    ContainerDropped,
    FieldCreated,
    FieldDropped,
    /// An external asset (a dataset recorded before its table was registered) adopted by the
    /// container it turned out to be: its jobs' and runs' datasets, evidence and edges moved
    /// there, its own edges retired. `detail` names it: `{"fqn", "namespace", "name", "edges"}`.
    ExternalAdopted,
}

/// One committed change to lineage, at its place in the store's change log.
pub struct LineageChange(pub ChangeItem);

#[Object]
impl LineageChange {
    /// Where this change is in the log: pass it as `after` to read on from here.
    async fn cursor(&self) -> String {
        self.0.cursor()
    }
    async fn kind(&self) -> ChangeKind {
        self.0.change.change.kind.into()
    }
    /// When the change was committed (for a backfilled change, when the edge's history says).
    async fn at(&self) -> DateTime {
        dt(self.0.change.change.at)
    }
    async fn edge_id(&self) -> Option<Id> {
        self.0.change.change.edge_id
    }
    async fn field_id(&self) -> Option<Id> {
        self.0.change.change.field_id
    }
    /// The containers the change touches: an edge's ends' containers (a field's container for a
    /// field end, none for an external end), or the container created or dropped, or the field's.
    async fn container_ids(&self) -> Vec<Id> {
        self.0.change.containers().collect()
    }
    /// The edge as it is now; null when it was deleted or the change is not an edge's.
    async fn edge(&self) -> Option<LineageEdge> {
        self.0.edge.clone().map(LineageEdge)
    }
    /// A relabel's before and after, e.g. `{"sourceType": {"from": "manual", "to": "inferred"}}`.
    async fn detail(&self) -> Option<Json<serde_json::Value>> {
        self.0.change.change.detail.clone().map(Json)
    }
}

/// A page of the change log, oldest first.
#[derive(SimpleObject)]
pub struct ChangePage {
    pub items: Vec<LineageChange>,
    /// Pass as `after` for the next page (also when this one is empty: nothing is lost).
    pub end_cursor: String,
    /// Whether more changes follow already.
    pub has_more: bool,
}

pub struct SubscriptionRoot;

#[Subscription]
impl SubscriptionRoot {
    /// The changes that touch the lineage within `depth` of a container (both sides), pushed as
    /// they commit, on any replica. Starts after `after` (a cursor from `changes` or an earlier
    /// change), or from now. A subscriber that falls more than 10,000 changes behind gets a
    /// `FELL_BEHIND` error carrying the `cursor` to resume from, and the stream ends.
    async fn lineage_changed(
        &self,
        ctx: &Context<'_>,
        container_id: Id,
        #[graphql(default_with = "Some(2)")] depth: Option<i64>,
        after: Option<String>,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<LineageChange>>> {
        // The caller is set by the websocket's `connection_init` (see `api::subscriptions`).
        let caller = caller(ctx);
        let stream = lineage(ctx).follow_changes(container_id, depth.unwrap_or(2), after.as_deref()).await?;
        tracing::debug!(user = %caller.user, container_id, "lineageChanged subscribed");
        let loaders = ctx.data::<Arc<Loaders>>()?.clone();
        Ok(stream.map(move |item| {
            // A subscription lives long: each change reads its edges' evidence and containers
            // afresh, as a new query would, and the caches do not grow with the stream.
            loaders.clear();
            match item {
                Ok(Followed::Change(item)) => Ok(LineageChange(*item)),
                Ok(Followed::Behind { cursor, backlog }) => {
                    let message = format!(
                        "the subscriber fell behind by {backlog} changes (more than {MAX_BACKLOG}); resume from cursor {cursor} with `changes(after:)` or a new subscription's `after`"
                    );
                    let error = async_graphql::Error::from(Error::FellBehind(message));
                    Err(error.extend_with(|_, ext| ext.set("cursor", cursor.clone())))
                }
                Err(e) => Err(e.into()),
            }
        }))
    }
}
