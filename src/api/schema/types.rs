//! The output types that more than one file of the schema names: their definitions and the
//! conversions that build them, nothing that reads. The GraphQL types refer to each other (a
//! `Container`'s producers are `Job`s whose outputs are `Container`s, an `Evidence` names its
//! `Run`); defined here, below the files that answer them, they let `catalog.rs`, `jobs.rs`,
//! `lineage.rs`, `history.rs` and `paths.rs` depend on this file and on `shared.rs` rather than on
//! each other. Each type's resolvers (`#[Object] impl`) stay in its concern's file; a type that
//! only its own file names is defined there. This file imports no sibling but `scalars`.

use std::borrow::Cow;

use async_graphql::parser::types::Field as Selected;
use async_graphql::registry::Registry;
use async_graphql::{ContextSelectionSet, Enum, OutputType, Positioned, ServerResult, SimpleObject, Value};

use super::scalars::{dt, DateTime};
use crate::domain::jobs::HealthState as DomainHealth;
use crate::domain::{self, Direction, Id, Timestamp};
use crate::service::frontier::{self, Completeness};
use crate::service::history::{AS_OF_NOT_RECONSTRUCTED, AS_OF_RECONSTRUCTED};
use crate::service::jobs as svc;

// ------------------------------------------------------------------ the catalog (`catalog.rs`)

pub struct Datastore(pub domain::Datastore);

/// A container record; reached from a graph node or an impact item as of an instant, the
/// instant (`health` is then the instant's).
pub struct Container(pub domain::Container, pub Option<domain::Timestamp>);

impl Container {
    /// The record read today (no instant).
    pub fn today(c: domain::Container) -> Self {
        Container(c, None)
    }
}

pub struct Field(pub domain::Field);

// ------------------------------------------------------------------ jobs and runs (`jobs.rs`)

/// A job as the caller may see it.
pub struct Job(pub svc::JobView);

/// A run as the caller may see it.
pub struct Run(pub svc::RunView);

/// A container's health (see `Container.health`).
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum HealthState {
    /// The jobs that write it last completed, and nothing upstream failed.
    Fresh,
    /// The latest run of a job that writes it failed or aborted after its last complete write.
    Failed,
    /// Something within 20 hops upstream is FAILED.
    Stale,
    /// No job writes it.
    Unknown,
}

impl From<DomainHealth> for HealthState {
    fn from(h: DomainHealth) -> Self {
        match h {
            DomainHealth::Fresh => HealthState::Fresh,
            DomainHealth::Failed => HealthState::Failed,
            DomainHealth::Stale => HealthState::Stale,
            DomainHealth::Unknown => HealthState::Unknown,
        }
    }
}

/// A container's health: see `HealthState`.
pub struct ContainerHealth(pub svc::Health);

/// A container's latest complete write: the run and when it ended.
pub struct LastWrite {
    pub run_id: Id,
    pub at: domain::Timestamp,
}

/// Which way a job edge goes: a dataset the job read (`INPUT`: dataset -> job) or wrote
/// (`OUTPUT`: job -> dataset).
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum JobEdgeKind {
    Input,
    Output,
}

/// An edge between a job and a dataset in a lineage graph with jobs.
#[derive(SimpleObject)]
pub struct JobEdge {
    pub job_id: Id,
    pub kind: JobEdgeKind,
    /// The container end, when it is one.
    pub container_id: Option<Id>,
    /// The external end's `ext:openlineage:<fqn>` node id, when it is one.
    pub external_node_id: Option<String>,
    /// The edge's source and target as node ids: `job:<id>`, a container id as text, or an
    /// external node id.
    pub source_node_id: String,
    pub target_node_id: String,
}

// ------------------------------------------------------------------ lineage (`lineage.rs`)

pub struct LineageEdge(pub domain::Edge);

/// Evidence, with `details` and `sourceRelation` only for callers with VIEWER on every
/// managed endpoint of its edge (the bool).
pub struct Evidence(pub domain::Evidence, pub bool);

// `remote`: async-graphql writes the `From` conversions to and from the domain's enum, variant by
// variant.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "Direction")]
pub enum Side {
    Upstream,
    Downstream,
}

#[derive(SimpleObject)]
pub struct ExternalNode {
    /// Always `external`.
    pub node_type: &'static str,
    /// `ext:<source_type>:<fqn>`.
    pub id: String,
    pub fqn: String,
    pub source_type: String,
    /// The node the graph is centred on (`externalLineageGraph`).
    pub is_target: bool,
}

// ------------------------------------------------------------------ what every traversal says about itself

/// The instant an answer was given as of, and what the store could rebuild for it.
#[derive(SimpleObject)]
pub struct AsOf {
    pub at: DateTime,
    /// What the answer rebuilt as it was at `at`.
    pub reconstructed: Vec<&'static str>,
    /// What the answer shows as it is now, because the store keeps no history of it.
    pub not_reconstructed: Vec<&'static str>,
}

impl AsOf {
    pub fn of(at: Option<Timestamp>) -> Option<AsOf> {
        at.map(|at| AsOf {
            at: dt(at),
            reconstructed: AS_OF_RECONSTRUCTED.to_vec(),
            not_reconstructed: AS_OF_NOT_RECONSTRUCTED.to_vec(),
        })
    }
}

/// Why a traversal stopped at a frontier node.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "frontier::StopReason")]
pub enum StopReason {
    /// The node is at the depth asked for.
    Depth,
    /// The answer holds as many items as `limit` allows (for `explainLineage`, `maxPaths`).
    Limit,
    /// The work budget ran out (`maxNodes`, or `explainLineage`'s search budget).
    Budget,
}

/// A node where a traversal stopped with more beyond it.
#[derive(SimpleObject)]
pub struct FrontierNode {
    /// A container id, or a field id for field traversals (`piiFlow`, `fieldConnections`, and
    /// `explainLineage` between fields).
    pub id: Id,
    /// The way the traversal was going.
    pub side: Side,
    /// Hops from the start (for a `LIMIT` entry of `explainLineage`: the next path's length).
    pub distance: i64,
    pub reason: StopReason,
    /// Distinct neighbours that way not in the answer, external assets included (for a `LIMIT`
    /// entry of `explainLineage`: further paths known, at least this many).
    pub beyond: i64,
}

/// The frontier and cycles of a `Completeness`, as GraphQL shows them.
pub fn frontier_out(c: &Completeness) -> Vec<FrontierNode> {
    c.frontier
        .iter()
        .map(|f| FrontierNode {
            id: f.id,
            side: f.side.into(),
            distance: f.distance,
            reason: f.reason.into(),
            beyond: f.beyond,
        })
        .collect()
}

/// A traversal's cycles in the schema (`[[Int!]!]!`), searched for only when the selection
/// asks for them.
pub struct CycleList(pub frontier::Cycles);

impl OutputType for CycleList {
    fn type_name() -> Cow<'static, str> {
        Vec::<Vec<Id>>::type_name()
    }

    fn qualified_type_name() -> String {
        Vec::<Vec<Id>>::qualified_type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        Vec::<Vec<Id>>::create_type_info(registry)
    }

    async fn resolve(&self, ctx: &ContextSelectionSet<'_>, field: &Positioned<Selected>) -> ServerResult<Value> {
        self.0.list().resolve(ctx, field).await
    }
}
