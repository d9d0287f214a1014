//! The answers about the past (issue #19, parts 1 and 2): `LineageDiff` with its nodes and edge
//! changes. `AsOf`, which an answer given as of an instant carries to say what it rebuilt and
//! what it shows as today, is in `types.rs` (every traversal's answer names it).

use async_graphql::{ComplexObject, Context, SimpleObject};

use super::scalars::{dt, odt, DateTime};
use super::shared::{load_container, load_field};
use super::{AsOf, Container, Field, GqlResult, LineageEdge};
use crate::domain::Id;
use crate::service::diff as svc;

/// A node that entered or left the lineage: a container, a field, or an external asset.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct DiffNode {
    /// `container`, `field` or `external`.
    pub kind: &'static str,
    pub container_id: Option<Id>,
    pub field_id: Option<Id>,
    /// `ext:<source_type>:<fqn>` of an external asset.
    pub external_id: Option<String>,
}

#[ComplexObject]
impl DiffNode {
    /// Today's record; null when deleted since.
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match self.container_id {
            Some(id) => load_container(ctx, id).await,
            None => Ok(None),
        }
    }
    /// Today's record; null when deleted since.
    async fn field(&self, ctx: &Context<'_>) -> GqlResult<Option<Field>> {
        match self.field_id {
            Some(id) => load_field(ctx, id).await,
            None => Ok(None),
        }
    }
}

impl From<svc::DiffNode> for DiffNode {
    fn from(n: svc::DiffNode) -> Self {
        let node = |kind| DiffNode { kind, container_id: None, field_id: None, external_id: None };
        match n {
            svc::DiffNode::Container(id) => DiffNode { container_id: Some(id), ..node("container") },
            svc::DiffNode::Field(id) => DiffNode { field_id: Some(id), ..node("field") },
            svc::DiffNode::External(id) => DiffNode { external_id: Some(id), ..node("external") },
        }
    }
}

/// An edge that appeared or was retired; `edge.evidence` says who asserted it (job, run, SQL
/// operation ids, observed time).
#[derive(SimpleObject)]
pub struct EdgeChange {
    pub edge: LineageEdge,
    /// When it appeared (the start of its live interval) or was retired (the end of it).
    pub at: Option<DateTime>,
}

impl From<svc::EdgeChange> for EdgeChange {
    fn from(c: svc::EdgeChange) -> Self {
        EdgeChange { edge: LineageEdge(c.edge), at: odt(c.at) }
    }
}

/// An edge replaced by one between the same ends with another label (source type, operation).
#[derive(SimpleObject)]
pub struct EdgeRelabel {
    pub before: EdgeChange,
    pub after: EdgeChange,
}

/// What changed in a lineage between `from` and `to`.
#[derive(SimpleObject)]
pub struct LineageDiff {
    pub from: DateTime,
    pub to: DateTime,
    pub appeared_nodes: Vec<DiffNode>,
    pub retired_nodes: Vec<DiffNode>,
    pub appeared_edges: Vec<EdgeChange>,
    pub retired_edges: Vec<EdgeChange>,
    pub relabelled_edges: Vec<EdgeRelabel>,
    /// What the two as-of traversals could rebuild (at is `to`).
    pub as_of: Option<AsOf>,
}

impl From<svc::LineageDiff> for LineageDiff {
    fn from(d: svc::LineageDiff) -> Self {
        LineageDiff {
            from: dt(d.from),
            to: dt(d.to),
            appeared_nodes: d.appeared_nodes.into_iter().map(Into::into).collect(),
            retired_nodes: d.retired_nodes.into_iter().map(Into::into).collect(),
            appeared_edges: d.appeared_edges.into_iter().map(Into::into).collect(),
            retired_edges: d.retired_edges.into_iter().map(Into::into).collect(),
            relabelled_edges: d
                .relabelled_edges
                .into_iter()
                .map(|r| EdgeRelabel { before: r.before.into(), after: r.after.into() })
                .collect(),
            as_of: AsOf::of(Some(d.to)),
        }
    }
}
