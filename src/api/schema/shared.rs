//! The reads that resolvers in several files make: a catalog record by id through its loader,
//! the jobs that touch a container and its health, an edge's gated evidence, an edge's ends.
//! Like `types.rs`, it sits below the concern files (`catalog.rs`, `jobs.rs`, `lineage.rs`,
//! `history.rs`, `paths.rs`, `search.rs`, `prefetch.rs`), so that none of them reaches into
//! another for a helper; it imports only `types.rs` and what `mod.rs` holds.

use std::sync::Arc;

use async_graphql::Context;

use super::{caller, lineage, loaders, Container, Datastore, Evidence, Field, GqlResult, Job, LastWrite, Run};
use crate::domain::{self, End, Id, IoDirection, IoEntry, Timestamp};
use crate::error::Error;
use crate::service::jobs as svc;

// ------------------------------------------------------------------ catalog records

pub(super) async fn load_datastore(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Datastore>> {
    Ok(loaders(ctx).datastores.load_one(id).await.map_err(Error::from)?.map(Datastore))
}

pub(super) async fn load_container(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Container>> {
    Ok(loaders(ctx).containers.load_one(id).await.map_err(Error::from)?.map(Container::today))
}

pub(super) async fn load_field(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Field>> {
    Ok(loaders(ctx).fields.load_one(id).await.map_err(Error::from)?.map(Field))
}

pub(super) async fn field_count(ctx: &Context<'_>, id: Id) -> GqlResult<i64> {
    Ok(loaders(ctx).field_counts.load_one(id).await.map_err(Error::from)?.unwrap_or(0))
}

pub(super) async fn stats(ctx: &Context<'_>, id: Id) -> GqlResult<(i64, i64)> {
    let s = loaders(ctx).stats.load_one(id).await.map_err(Error::from)?;
    Ok(s.map(|s| (s.field_count, s.linked_field_count)).unwrap_or((0, 0)))
}

// ------------------------------------------------------------------ jobs, runs and health

/// Jobs by id as the caller may see them, in the order asked (unknown ids left out).
pub(super) async fn load_jobs(ctx: &Context<'_>, ids: &[Id]) -> GqlResult<Vec<Job>> {
    let found = loaders(ctx).jobs.loader.load_many(ids.iter().copied()).await.map_err(Error::from)?;
    let jobs: Vec<domain::Job> = ids.iter().filter_map(|id| found.get(id).cloned()).collect();
    Ok(lineage(ctx).job_views(caller(ctx), jobs).await?.into_iter().map(Job).collect())
}

pub(super) async fn load_job(ctx: &Context<'_>, id: Id) -> GqlResult<Option<Job>> {
    Ok(load_jobs(ctx, &[id]).await?.into_iter().next())
}

impl Run {
    /// The run with its job's visibility for the caller.
    pub(super) async fn checked(ctx: &Context<'_>, run: domain::Run) -> GqlResult<Run> {
        let restricted = match load_job(ctx, run.job_id).await? {
            Some(job) => job.0.restricted,
            None => false,
        };
        Ok(Run(svc::RunView { run, restricted }))
    }
}

/// The request's health index now or as of `at` (each computed at its first use).
pub(super) async fn health_index(ctx: &Context<'_>, at: Option<Timestamp>) -> GqlResult<Arc<svc::HealthIndex>> {
    let mut slots = loaders(ctx).health_index.lock().await;
    if let Some(index) = slots.get(&at) {
        return Ok(index.clone());
    }
    let index = Arc::new(lineage(ctx).view_at(at).health_index().await?);
    slots.insert(at, index.clone());
    Ok(index)
}

/// The health of these containers now or as of `at`, against the request's index.
pub(super) async fn healths(
    ctx: &Context<'_>,
    ids: &[Id],
    at: Option<Timestamp>,
) -> GqlResult<std::collections::HashMap<Id, svc::Health>> {
    let index = health_index(ctx, at).await?;
    Ok(lineage(ctx).view_at(at).health_of(&index, ids).await?)
}

/// The job datasets on a container, through the request's loader.
async fn container_jobs(ctx: &Context<'_>, container_id: Id) -> GqlResult<Vec<(Id, IoEntry)>> {
    Ok(loaders(ctx).container_jobs.load_one(container_id).await.map_err(Error::from)?.unwrap_or_default())
}

/// The jobs that write (`Wrote`) or read a container, as the caller may see them.
pub(super) async fn jobs_of(ctx: &Context<'_>, container_id: Id, direction: IoDirection) -> GqlResult<Vec<Job>> {
    let rows = container_jobs(ctx, container_id).await?;
    let mut ids: Vec<Id> = rows.into_iter().filter(|(_, e)| e.direction == direction).map(|(j, _)| j).collect();
    ids.sort_unstable();
    ids.dedup();
    load_jobs(ctx, &ids).await
}

/// A container's latest complete write by any job.
pub(super) async fn last_write(ctx: &Context<'_>, container_id: Id) -> GqlResult<Option<LastWrite>> {
    let rows = container_jobs(ctx, container_id).await?;
    Ok(rows
        .into_iter()
        .filter_map(|(_, e)| e.completed.filter(|_| e.direction == IoDirection::Wrote))
        .max_by_key(|(run, at)| (*at, *run))
        .map(|(run_id, at)| LastWrite { run_id, at }))
}

// ------------------------------------------------------------------ edges

/// An edge's evidence, its details gated by `evidence_visible`: what `LineageEdge.evidence`
/// and `explainLineage`'s hops return.
pub(super) async fn edge_evidence(ctx: &Context<'_>, edge: &domain::Edge) -> GqlResult<Vec<Evidence>> {
    let ev = loaders(ctx).evidence.load_one(edge.id).await.map_err(Error::from)?;
    let visible = evidence_visible(ctx, edge).await?;
    Ok(ev.unwrap_or_default().into_iter().map(|e| Evidence(e, visible)).collect())
}

/// VIEWER on the datastore of every managed endpoint (containers through the loader, so a
/// page of edges costs one batch); unrestricted admins always see the details.
async fn evidence_visible(ctx: &Context<'_>, edge: &domain::Edge) -> GqlResult<bool> {
    let caller = caller(ctx);
    if caller.unrestricted_admin {
        return Ok(true);
    }
    for end in [&edge.source, &edge.target] {
        let Some(cid) = end.container_id() else { continue };
        match loaders(ctx).containers.load_one(cid).await.map_err(Error::from)? {
            Some(c) if caller.has(c.datastore_id, crate::auth::Permission::Viewer) => {}
            Some(_) => return Ok(false),
            // A deleted container has no datastore left to grant access.
            None => return Ok(false),
        }
    }
    Ok(true)
}

pub(super) fn container_end(end: &End) -> Option<Id> {
    match end {
        End::Container { id } => Some(*id),
        _ => None,
    }
}
pub(super) fn field_end(end: &End) -> Option<Id> {
    match end {
        End::Field { id, .. } => Some(*id),
        _ => None,
    }
}
