//! The change log's model: what a committed change to lineage records (edge asserted, retired,
//! revived, relabelled or deleted; container or field created or dropped; an external asset
//! adopted by its container) and its position in the store's ordered, durable log. Stores write
//! a `NewChange` in the same transaction as the change itself and hand back `Change`s in
//! position order; the service pages and filters them.

use super::{Edge, Id, Timestamp};

/// What happened. The names are the GraphQL `ChangeKind` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// A new edge: its first assertion (or `createEdge`).
    EdgeAsserted,
    /// A live edge retired (its interval closed).
    EdgeRetired,
    /// A retired edge asserted again (a new interval).
    EdgeRevived,
    /// An edge's label changed: its source type or description, or the operation it lacked.
    EdgeRelabelled,
    /// An edge removed for good (a manual edge's delete).
    EdgeDeleted,
    ContainerCreated,
    ContainerDropped,
    FieldCreated,
    FieldDropped,
    /// An external asset's lineage (a dataset recorded before its table was catalogued) moved to
    /// the container it turned out to be: its edges retired, the jobs' and runs' datasets and
    /// the evidence now the container's. `detail` names the asset.
    ExternalAdopted,
}

impl ChangeKind {
    pub const ALL: [ChangeKind; 10] = [
        ChangeKind::EdgeAsserted,
        ChangeKind::EdgeRetired,
        ChangeKind::EdgeRevived,
        ChangeKind::EdgeRelabelled,
        ChangeKind::EdgeDeleted,
        ChangeKind::ContainerCreated,
        ChangeKind::ContainerDropped,
        ChangeKind::FieldCreated,
        ChangeKind::FieldDropped,
        ChangeKind::ExternalAdopted,
    ];

    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::EdgeAsserted => "edge_asserted",
            ChangeKind::EdgeRetired => "edge_retired",
            ChangeKind::EdgeRevived => "edge_revived",
            ChangeKind::EdgeRelabelled => "edge_relabelled",
            ChangeKind::EdgeDeleted => "edge_deleted",
            ChangeKind::ContainerCreated => "container_created",
            ChangeKind::ContainerDropped => "container_dropped",
            ChangeKind::FieldCreated => "field_created",
            ChangeKind::FieldDropped => "field_dropped",
            ChangeKind::ExternalAdopted => "external_adopted",
        }
    }

    pub fn parse(text: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// A change as a write path records it; the store gives it its position.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChange {
    pub at: Timestamp,
    pub kind: ChangeKind,
    pub edge_id: Option<Id>,
    pub field_id: Option<Id>,
    /// The containers the change touches: an edge's two ends' containers (a field end counts as
    /// its container; an external end as none), or the container created or dropped, or the
    /// field's container. The `containerId` filter matches either.
    pub container_ids: [Option<Id>; 2],
    /// What changed where a kind alone does not say (a relabel's before and after).
    pub detail: Option<serde_json::Value>,
}

impl NewChange {
    pub fn edge(kind: ChangeKind, edge: &Edge, at: Timestamp) -> NewChange {
        let (a, b) = (edge.source.container_id(), edge.target.container_id());
        NewChange {
            at,
            kind,
            edge_id: Some(edge.id),
            field_id: None,
            container_ids: if a == b { [a, None] } else { [a, b] },
            detail: None,
        }
    }

    pub fn container(kind: ChangeKind, container_id: Id, at: Timestamp) -> NewChange {
        NewChange { at, kind, edge_id: None, field_id: None, container_ids: [Some(container_id), None], detail: None }
    }

    pub fn field(kind: ChangeKind, field_id: Id, container_id: Id, at: Timestamp) -> NewChange {
        NewChange {
            at,
            kind,
            edge_id: None,
            field_id: Some(field_id),
            container_ids: [Some(container_id), None],
            detail: None,
        }
    }

    pub fn with_detail(mut self, detail: serde_json::Value) -> NewChange {
        self.detail = Some(detail);
        self
    }

    /// The first container, or the second when there is no first (an edge from an external end).
    pub fn container_a(&self) -> Option<Id> {
        self.container_ids[0].or(self.container_ids[1])
    }

    /// The second container, when there are two.
    pub fn container_b(&self) -> Option<Id> {
        self.container_ids[0].and(self.container_ids[1])
    }
}

/// A change with its position in the log: unique, increasing in commit order.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub position: Id,
    pub change: NewChange,
}

impl Change {
    pub fn containers(&self) -> impl Iterator<Item = Id> + '_ {
        self.change.container_ids.iter().flatten().copied()
    }
}

/// The `EDGE_RELABELLED` change of an edit, when its label (source type, description) changed.
pub fn relabel(before: &Edge, after: &Edge, at: Timestamp) -> Option<NewChange> {
    let mut detail = serde_json::Map::new();
    if before.source_type != after.source_type {
        detail.insert("sourceType".into(), serde_json::json!({"from": before.source_type, "to": after.source_type}));
    }
    if before.description != after.description {
        detail.insert("description".into(), serde_json::json!({"from": before.description, "to": after.description}));
    }
    (!detail.is_empty()).then(|| NewChange::edge(ChangeKind::EdgeRelabelled, after, at).with_detail(detail.into()))
}

/// The changes of an edge's history that its own record tells (what a store made before the
/// change log can backfill): asserted at its creation, then per interval retired at its end and
/// revived at the next one's start.
pub fn edge_history(edge: &Edge) -> Vec<NewChange> {
    let mut out = vec![NewChange::edge(ChangeKind::EdgeAsserted, edge, edge.created)];
    for (i, interval) in edge.intervals.iter().enumerate() {
        if i > 0 {
            out.push(NewChange::edge(ChangeKind::EdgeRevived, edge, interval.from));
        }
        if let Some(to) = interval.to {
            out.push(NewChange::edge(ChangeKind::EdgeRetired, edge, to));
        }
    }
    if edge.intervals.is_empty() {
        if let Some(retired) = edge.retired_at {
            out.push(NewChange::edge(ChangeKind::EdgeRetired, edge, retired));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{End, Interval};

    fn at(s: i64) -> Timestamp {
        chrono::DateTime::from_timestamp(s, 0).unwrap_or_default()
    }

    #[test]
    fn kinds_round_trip() {
        for k in ChangeKind::ALL {
            assert_eq!(ChangeKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(ChangeKind::parse("edge_moved"), None);
    }

    #[test]
    fn an_edge_history_follows_its_intervals() {
        let edge = Edge {
            id: 7,
            created: at(10),
            source: End::Field { id: 3, container_id: 1 },
            target: End::External { fqn: "x".into() },
            description: None,
            source_type: "openlineage".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: None,
            retired_at: None,
            intervals: vec![Interval { from: at(10), to: Some(at(20)) }, Interval { from: at(30), to: None }],
        };
        let h = edge_history(&edge);
        let kinds: Vec<_> = h.iter().map(|c| (c.kind, c.at)).collect();
        assert_eq!(
            kinds,
            vec![
                (ChangeKind::EdgeAsserted, at(10)),
                (ChangeKind::EdgeRetired, at(20)),
                (ChangeKind::EdgeRevived, at(30))
            ]
        );
        assert_eq!((h[0].container_a(), h[0].container_b()), (Some(1), None));
    }
}
