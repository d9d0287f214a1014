//! Prefetching: a resolver that returns a list reads, in one batch per kind, what its selection
//! will ask of every item, so the per-item resolvers that follow find it in the loaders' caches
//! (a graph of 500 nodes costs a statement per kind, not one per node).

use std::borrow::Borrow;

use async_graphql::Context;

use super::shared::{container_end, field_end};
use super::{loaders, GqlResult};
use crate::api::loaders::LoadError;
use crate::domain::{self, Id};
use crate::error::Error;

/// Loads, in one batch per kind, what the selection under `path` will ask of these containers.
pub(super) async fn prefetch_containers(
    ctx: &Context<'_>,
    sel: async_graphql::Lookahead<'_>,
    ids: &[Id],
) -> GqlResult<()> {
    if ids.is_empty() || !sel.exists() {
        return Ok(());
    }
    let l = loaders(ctx);
    let wants_count = sel.field("fieldCount").exists();
    let wants_linked = sel.field("linkedFieldCount").exists();
    let wants_datastores = sel.field("datastore").exists() || sel.field("datastoreName").exists();
    // Side by side: on Neo4j each read is a round trip of its own (embedded reads run inline).
    let containers = async {
        l.containers.prefetch(ids.iter().copied()).await?;
        if wants_datastores {
            // From the cache just filled.
            let containers = l.containers.loader.load_many(ids.iter().copied()).await?;
            l.datastores.prefetch(containers.values().map(|c| c.datastore_id)).await?;
        }
        Ok(())
    };
    let stats = async {
        if wants_linked {
            // The full stats carry the counts too: one statement for both fields.
            l.stats.prefetch(ids.iter().copied()).await?;
            let stats = l.stats.loader.load_many(ids.iter().copied()).await?;
            let counts = ids.iter().map(|id| (*id, stats.get(id).map_or(0, |s| s.field_count)));
            l.field_counts.feed(counts).await;
        } else if wants_count {
            l.field_counts.prefetch(ids.iter().copied()).await?;
        }
        Ok(())
    };
    let (containers, stats): (Result<(), LoadError>, Result<(), LoadError>) = tokio::join!(containers, stats);
    containers.and(stats).map_err(Error::from)?;
    Ok(())
}

/// The same for edges: their evidence and the containers and fields at their ends.
pub(super) async fn prefetch_edges<E: Borrow<domain::Edge>>(
    ctx: &Context<'_>,
    sel: async_graphql::Lookahead<'_>,
    edges: &[E],
) -> GqlResult<()> {
    if edges.is_empty() || !sel.exists() {
        return Ok(());
    }
    let l = loaders(ctx);
    if sel.field("evidence").exists() {
        l.evidence.prefetch(edges.iter().map(|e| e.borrow().id)).await.map_err(Error::from)?;
    }
    let ends = || edges.iter().map(Borrow::borrow).flat_map(|e: &domain::Edge| [&e.source, &e.target]);
    let source = sel.field("sourceContainer");
    let target = sel.field("targetContainer");
    if source.exists() || target.exists() {
        let ids: Vec<Id> = ends().filter_map(container_end).collect();
        let merged = if source.exists() { source } else { target };
        prefetch_containers(ctx, merged, &ids).await?;
    }
    if sel.field("sourceField").exists() || sel.field("targetField").exists() {
        l.fields.prefetch(ends().filter_map(field_end)).await.map_err(Error::from)?;
    }
    Ok(())
}
