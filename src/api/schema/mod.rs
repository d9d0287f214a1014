//! The GraphQL schema: output types wrapping domain values, inputs, and the root resolvers.
//! Resolvers read the caller and the loaders from the context, call one service function and
//! map the result; cross-node fields go through the data loaders.
//!
//! One file per concern; this one holds what every resolver shares (the context accessors, the
//! query limits and their complexity weights) and builds the schema.
//!
//! The files are layered, with no import circle (`scripts/import-circles src/api/schema`):
//! `types` and `shared` at the bottom, the concern files above them, which import those two
//! (and `page`, `plain`, `scalars`) but not each other, and the roots on top. The GraphQL types
//! refer to each other (a `Container`'s producers are `Job`s whose outputs are `Container`s);
//! their definitions sit in `types`, their resolvers with their concern.
//!
//! - `types`: the output types that more than one file names (`Container`, `Job`, `Run`,
//!   `LineageEdge`, `Evidence`, `AsOf`, `FrontierNode`, `CycleList`, ...), defined without their
//!   resolvers.
//! - `shared`: the reads that resolvers in several files make (`load_container`, `healths`,
//!   `jobs_of`, `edge_evidence`, `Run::checked`, ...).
//! - `queries` and `mutations`: the two root objects, each whole in one file. `schema.graphql`
//!   lists a root's fields in the order they are written there, so a new field goes where it
//!   should appear (and the file is regenerated with `cargo run -- schema > schema.graphql`).
//! - `catalog`: datastores, containers, fields and their metadata assertions.
//! - `lineage`: edges, their evidence and intervals, the lineage graph, impact and PII flow.
//! - `history`: what answers about the past add: `lineageDiff`'s changes.
//! - `paths`: `explainLineage`'s paths and `lineageSummary`'s counts.
//! - `plain`: large lists answered without a future per field, when their items hold what the
//!   selection asks; `plain_types`: the fields each type so answered holds.
//! - `prefetch`: loads in one batch what a list's selection will ask of every item.
//! - `reports`: what the SQL and OpenLineage ingests answer.
//! - `identity`: roles, permissions, teams and `Me`.
//! - `events`: stored OpenLineage events.
//! - `jobs`: jobs, runs, a container's health and last write, incidents.
//! - `inputs`: the input objects of the mutations.
//! - `limits`: the depth and complexity caps, refused with the cap and the excess named.
//! - `page`: the paged lists (`EdgePage`, `FieldPage`, ...), one generic type.
//! - `scalars`: `DateTime`.
//! - `search`: `search`'s kinds and hits.
//! - `changes`: the change feed (`LineageChange`, `ChangePage`) and `SubscriptionRoot`.
//!
//! Every public type is re-exported here: its path is `crate::api::schema::Name` wherever it lives.
//!
//! # How it fits
//!
//! `QueryRoot` (`queries.rs`) and `MutationRoot` (`mutations.rs`) hold the resolvers, each root whole in its file, so a
//! root's field order in `schema.graphql` is the order in its file. The types live by concern (a type another file
//! names is defined in `types.rs`, its resolvers still with its concern): `catalog.rs`
//! (`Datastore`, `Container`, `Field`, `MetadataAssertion`), `lineage.rs` (`LineageEdge`, `Evidence`, the graph, impact
//! and PII shapes, `Side`), `reports.rs` (ingest and SQL reports), `identity.rs`, `events.rs`, `inputs.rs`,
//! `scalars.rs` (`DateTime`) and `page.rs`: one generic `Page<T>` with a concrete GraphQL name per item type
//! (`EdgePage`, `ContainerPage`, ...). GraphQL enums mirror domain and auth enums with `#[graphql(remote = ...)]`,
//! which writes both `From`s. Each resolver reads the context, calls one `service::Lineage` method (or one batched
//! store read for plain lookups) with the `Caller`, and wraps the result. The output types (`Container`, `LineageEdge`,
//! `Evidence`, `IngestReport`, `MetadataAssertion`, `StoredEvent`, `Me`, ...) wrap domain values, so the wire shape is
//! defined only here. `Evidence` carries a flag from `evidence_visible`, which hides `details` and `sourceRelation`
//! unless the caller has `VIEWER` on the datastore of every catalogued end (looked up through the container loader).
//! `build_schema` installs `limits::QueryLimits`, which checks the depth (15) and complexity (150,000) caps after
//! validation and refuses with the cap, the query's value and the excess (async-graphql's own limits say only "too
//! complex"); `tributary schema` prints its SDL. A list field taking `size` weighs that many copies of its selection
//! (`complexity = "paged(size, child_complexity)"`), so lists nested at page size 1,000 are refused before they run; a
//! traversal (`impact`, `externalImpact`, `piiFlow`, root fields that cannot nest) weighs one copy per 100 of `limit`
//! (`limited`), so the documented maximum of 100,000 passes with up to 150 selected fields. `Container.description`,
//! `owners` and `tags` are the effective metadata (`domain::effective_container_metadata`) read through the `metadata`
//! loader, null without REPORTER. `search.rs` holds `search`'s `SearchKind`, `SearchMatch` and `SearchHit`.

mod catalog;
mod changes;
mod events;
mod history;
mod identity;
mod inputs;
mod jobs;
mod limits;
mod lineage;
mod mutations;
mod page;
mod paths;
mod plain;
mod plain_types;
mod prefetch;
mod queries;
mod reports;
mod scalars;
mod search;
mod shared;
mod types;

use async_graphql::{Context, Schema};

use super::loaders::Loaders;
use crate::service::{self, Caller, Lineage};

pub use self::catalog::MetadataAssertion;
pub use self::changes::{ChangeKind, ChangePage, LineageChange, SubscriptionRoot};
pub use self::events::StoredEvent;
pub use self::history::{DiffNode, EdgeChange, EdgeRelabel, LineageDiff};
pub use self::identity::{DatastorePermission, Me, PermissionLevel, Role, Team};
pub use self::inputs::{ContainerInput, CreateEdgeInput, DatastoreInput, FieldInput, TeamInput, UpdateEdgeInput};
pub use self::jobs::{Incident, IncidentPage, JobDataset, JobPage, RunPage, RunState, RunStateChange};
pub use self::lineage::{
    FieldConnections, GraphNode, Impact, ImpactedContainer, ImpactedExternal, Interval, LineageGraph, PiiField, PiiFlow,
};
pub use self::mutations::MutationRoot;
pub use self::page::{ContainerPage, EdgePage, FieldPage, Page, StoredEventPage};
pub use self::paths::{EndInput, LineageExplanation, LineageSummary};
pub use self::queries::QueryRoot;
pub use self::reports::{
    IngestError, IngestEventReport, IngestReport, RecordLineageResult, SqlColumnLineage, SqlIngestReport,
    SqlStatementLineage,
};
pub use self::scalars::DateTime;
pub use self::search::{SearchHit, SearchKind, SearchMatch};
pub use self::types::{
    AsOf, Container, ContainerHealth, Datastore, Evidence, ExternalNode, Field, HealthState, Job, JobEdge, JobEdgeKind,
    LastWrite, LineageEdge, Run, Side,
};

pub type TributarySchema = Schema<QueryRoot, MutationRoot, SubscriptionRoot>;

type GqlResult<T> = async_graphql::Result<T>;

fn lineage<'a>(ctx: &Context<'a>) -> &'a Lineage {
    ctx.data_unchecked::<Lineage>()
}
/// A request's own `Loaders`; on a websocket, the connection's shared ones (see
/// `api::subscriptions`, which empties them before each change it sends).
fn loaders<'a>(ctx: &Context<'a>) -> &'a Loaders {
    match ctx.data_opt::<Loaders>() {
        Some(l) => l,
        None => ctx.data_unchecked::<std::sync::Arc<Loaders>>(),
    }
}
fn caller<'a>(ctx: &Context<'a>) -> &'a Caller {
    ctx.data_unchecked::<Caller>()
}
fn auth<'a>(ctx: &Context<'a>) -> &'a crate::auth::Auth {
    ctx.data_unchecked::<crate::auth::Auth>()
}

/// Query depth and complexity caps: a crafted query is refused before it touches the store
/// (`limits::QueryLimits`, whose refusal names the cap and the excess). A paged list field
/// weighs `size` copies of its selection (`paged`), so lists nested at 1,000 weigh billions; the
/// cap leaves room for a page of 1,000 items of up to 150 fields each. A traversal (`impact`,
/// `externalImpact`, `piiFlow`) weighs one copy of its selection per 100 of its `limit`
/// (`limited`): it is a root field, so it cannot nest, and its cost is bounded by the traversal
/// itself; at the documented maximum of 100,000 its selection may have up to 150 fields.
pub const MAX_QUERY_DEPTH: usize = 15;
pub const MAX_QUERY_COMPLEXITY: usize = 150_000;

/// The complexity of a paged field: `size` items of its selection. Out-of-range sizes are
/// refused by the resolver; here they only need to weigh something sane.
fn paged(size: Option<i64>, child_complexity: usize) -> usize {
    weigh(size.unwrap_or(50), service::MAX_PAGE_SIZE, child_complexity)
}

/// The complexity of a traversal answering up to `limit` items of its selection: one copy of
/// the selection per `TRAVERSAL_ITEMS_PER_COPY` items (see `MAX_QUERY_COMPLEXITY`).
fn limited(limit: Option<i64>, child_complexity: usize) -> usize {
    let limit = limit.unwrap_or(10_000).clamp(1, service::MAX_RESULT_LIMIT);
    let copies = (limit - 1) / TRAVERSAL_ITEMS_PER_COPY + 1;
    weigh(copies, service::MAX_RESULT_LIMIT, child_complexity)
}

const TRAVERSAL_ITEMS_PER_COPY: i64 = 100;

fn weigh(count: i64, max: i64, child_complexity: usize) -> usize {
    usize::try_from(count.clamp(1, max)).unwrap_or(1).saturating_mul(child_complexity.max(1))
}

pub fn build_schema() -> TributarySchema {
    Schema::build(QueryRoot, MutationRoot, SubscriptionRoot).extension(limits::QueryLimits).finish()
}
