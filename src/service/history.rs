//! Lineage as of a past instant (issue #19, part 1): a view of the service whose traversals read
//! the edges live at that instant, from their live intervals.
//!
//! One rule, one place: every traversal (`lineageGraph`, `impact`, `piiFlow`,
//! `fieldConnections`, `lineageDiff`) reads its levels through [`Lineage::level_edges`] and the
//! graph's surroundings through [`Lineage::graph_around`]. Without an instant they are today's
//! store reads, unchanged; with one they are the stores' reads "live at t"
//! (`Store::container_edges_live_at`, `container_edges_within_at`, `container_edge_flags_at`):
//! each store tests [`Edge::live_at`]'s rule where the edges lie (the embedded store in SQL, with
//! the rule's own Rust function; Neo4j in Cypher) and decodes only the edges live then, so a hub
//! next to the graph costs its first live edge, as today's `EXISTS` does, not its whole fan-out.
//!
//! What is reconstructed and what is not is said in the answer ([`AS_OF_RECONSTRUCTED`],
//! [`AS_OF_NOT_RECONSTRUCTED`]) and in the README: the stores keep each edge's live intervals
//! and each run's states and datasets with their times (jobs, runs and health as of an instant:
//! `service::jobs_asof`), but no history of the catalog's records or of an edge's attributes.
//!
//! # How it fits
//!
//! `Lineage::at(asOf)` checks the instant (not in the future, not before
//! `Store::first_edge_created`) and returns a view of the service whose `as_of` is set; the
//! traversals read every level through `Lineage::level_edges` and the graph's surroundings through
//! `Lineage::graph_around`. Without an instant these are the store's `container_edges_of` /
//! `field_edges_of` / `container_graph_around`, unchanged; with one they are
//! `container_edges_live_at` / `field_edges_live_at` (the edges around the ids live at one of the
//! instants, deleted ends included), `container_edges_within_at` and `container_edge_flags_at`.
//! The embedded store answers them in SQL with the registered function `edge_live_at`
//! (`store/sqlite/live_at.rs`, which calls `domain::live_at`, the rule behind `Edge::live_at`),
//! after an indexed `retired_at` bound; Neo4j spells the same rule in Cypher
//! (`cypher/*_live_at*.cypher`). Invariant: the liveness rule at an instant is `domain::live_at`'s
//! (the integration test `as_of_graphs_and_diffs_agree_with_the_edges_live_then` holds both stores
//! to it); no resolver filters by time. `edges(asOf)` still filters its pages in Rust (`edges_page`), a listing being bounded.
//! `lineage_diff` / `field_lineage_diff` (`service::diff`) read both instants in one traversal;
//! a retired and an appeared edge between the same ends are one relabel.

use std::borrow::Cow;

use super::Lineage;
use crate::domain::time::rfc3339_micros;
use crate::domain::{self, Direction, Edge, EdgeFilter, Id, Page, PageRequest, Timestamp};
use crate::error::{Error, Result};
use crate::store::{GraphAround, GraphScope};

/// What an answer as of a past instant rebuilds from the store's history.
pub const AS_OF_RECONSTRUCTED: &[&str] = &[
    "which edges were live, from each edge's live intervals (an edge retired and revived counts only inside its intervals)",
    "which containers and fields those edges joined, deleted ones included (by id)",
    "hasUpstream and hasDownstream, from the same edges",
    "jobs and runs: the jobs first seen by then, what each read and wrote (what its latest run then read and wrote), its latest run then with the states it had reported by then",
    "health (healthAlert, impact's health): computed from each job's latest run then and the edges live then",
];

/// What an answer as of a past instant shows as it is today.
pub const AS_OF_NOT_RECONSTRUCTED: &[&str] = &[
    "catalog records (names, types, fields, metadata) are today's; a container or field deleted since has none",
    "an edge's attributes and evidence (description, operation, transformations, details) are their latest",
    "manual edges deleted since are gone (only provider edges are retired and keep their intervals)",
    "a job's facets (description, owners, SQL, source code location) are their latest",
    "a container record's producers, consumers and lastWrite are today's (its state, FAILED or STALE, is the instant's)",
];

/// Edges read per page when `edges(asOf:)` filters a listing.
const SCAN_PAGE: i64 = 1000;

impl Lineage {
    /// The instant a view answers as of: `None` for today.
    pub fn as_of(&self) -> Option<Timestamp> {
        self.as_of
    }

    /// The service as of `at` (`None`: itself, today). `BAD_USER_INPUT` when `at` is in the
    /// future or before the first edge the store recorded.
    pub async fn at(&self, at: Option<Timestamp>) -> Result<Cow<'_, Lineage>> {
        let Some(at) = at else { return Ok(Cow::Borrowed(self)) };
        self.check_instant("asOf", at).await?;
        Ok(self.view_at(Some(at)))
    }

    /// An instant the store can answer for: not in the future, not before its first edge.
    pub(crate) async fn check_instant(&self, argument: &str, at: Timestamp) -> Result<()> {
        let now = domain::now();
        if at > now {
            return Err(Error::BadInput(format!(
                "{argument} {} is in the future (now is {})",
                rfc3339_micros(&at),
                rfc3339_micros(&now)
            )));
        }
        // Read once: the earliest edge only changes when a store is imported, before `serve`
        // (a manual edge deleted later leaves an earlier bound, which answers an empty graph).
        let first = match self.first_recorded.get() {
            Some(t) => Some(*t),
            None => self.store.first_edge_created().await?.map(|t| *self.first_recorded.get_or_init(|| t)),
        };
        match first {
            None => Err(Error::BadInput(format!(
                "{argument} {}: nothing has been recorded yet, so there is no lineage to show as of a time",
                rfc3339_micros(&at)
            ))),
            Some(first) if at < first => Err(Error::BadInput(format!(
                "{argument} {} is before anything was recorded (the first edge was recorded at {})",
                rfc3339_micros(&at),
                rfc3339_micros(&first)
            ))),
            Some(_) => Ok(()),
        }
    }

    /// One level of a traversal: the container-level (or field-level) edges into (`Upstream`) or
    /// out of (`Downstream`) `ids`, live now or, in a view, live at its instant.
    pub(crate) async fn level_edges(&self, ids: &[Id], direction: Direction, over_fields: bool) -> Result<Vec<Edge>> {
        let Some(at) = self.as_of else {
            return Ok(match over_fields {
                true => self.store.field_edges_of(ids, direction).await?,
                false => self.store.container_edges_of(ids, direction).await?,
            });
        };
        Ok(match over_fields {
            true => self.store.field_edges_live_at(ids, direction, &[at]).await?,
            false => self.store.container_edges_live_at(ids, direction, &[at]).await?,
        })
    }

    /// What a lineage graph shows around its containers: the store's cheap read today; as of an
    /// instant, the same two reads with the store's liveness test at the instant.
    pub(crate) async fn graph_around(&self, scope: &GraphScope) -> Result<GraphAround> {
        let Some(at) = self.as_of else {
            return Ok(self.store.container_graph_around(scope).await?);
        };
        // Only what the traversal did not read, as the stores do: edges out of the containers
        // whose outgoing edges it did not read, into those whose incoming edges it did not read.
        let (sources, targets) = scope.unread();
        let instants = [at];
        let (edges, (has_upstream, has_downstream)) = tokio::try_join!(
            self.store.container_edges_within_at(&sources, &targets, &instants),
            self.store.container_edge_flags_at(scope, at)
        )?;
        Ok(GraphAround { edges, has_upstream, has_downstream })
    }

    /// One edge by id (retired ones too); in a view, only if it was live at the instant.
    pub async fn edge_by_id(&self, id: Id) -> Result<Option<Edge>> {
        let edge = self.store.edges_by_ids(&[id]).await?.pop();
        Ok(edge.filter(|e| self.as_of.is_none_or(|at| e.live_at(at))))
    }

    /// `list_edges`; in a view, the edges live at the instant among all that match the filter
    /// (retired ones included), paged after filtering so `total` counts them.
    pub async fn edges_page(&self, filter: EdgeFilter, page: PageRequest) -> Result<Page<Edge>> {
        let Some(at) = self.as_of else { return self.list_edges(filter, page).await };
        let filter = EdgeFilter { include_retired: true, ..filter };
        let (mut live, mut scan) = (Vec::new(), 1);
        loop {
            let p = self.store.list_edges(&filter, PageRequest { page: scan, size: SCAN_PAGE }).await?;
            let done = p.items.len() < SCAN_PAGE as usize;
            live.extend(p.items.into_iter().filter(|e| e.live_at(at)));
            if done {
                break;
            }
            scan += 1;
        }
        let total = live.len() as i64;
        let start = usize::try_from(page.offset()).unwrap_or(usize::MAX).min(live.len());
        let items = live.into_iter().skip(start).take(page.size as usize).collect();
        Ok(Page { items, total, page })
    }
}
