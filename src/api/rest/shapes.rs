//! The REST answers, in the seeds' snake_case shapes, and `Lookups`: what a shape needs beyond
//! the service's answer (the containers, datastores and fields at an edge's ends, evidence, field
//! counts), read in one batch per kind for the whole answer, as the GraphQL loaders read it.
//! The OpenAPI schemas are derived from these types.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Permission;
use crate::domain::{self, container_key, End, Id, Timestamp};
use crate::error::Error;
use crate::service::{self, Caller, Lineage};

/// Timestamps as GraphQL's `DateTime` writes them: RFC 3339, UTC, microseconds, `Z`.
pub fn ts(t: Timestamp) -> String {
    crate::domain::time::rfc3339_micros(&t)
}

fn ots(t: Option<Timestamp>) -> Option<String> {
    t.map(ts)
}

pub fn container_end(end: &End) -> Option<Id> {
    match end {
        End::Container { id } => Some(*id),
        _ => None,
    }
}

pub fn field_end(end: &End) -> Option<Id> {
    match end {
        End::Field { id, .. } => Some(*id),
        _ => None,
    }
}

/// A container at an edge's end.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct ContainerRef {
    pub id: i64,
    pub name: String,
    pub display_name: Option<String>,
    pub container_type: String,
    pub datastore_id: i64,
    pub datastore_name: Option<String>,
}

/// A field at an edge's end.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct FieldRef {
    pub id: i64,
    pub name: String,
    pub display_name: Option<String>,
    #[serde(rename = "type")]
    pub data_type: Option<String>,
    pub status: String,
    pub container_id: i64,
}

/// What an edge was derived from. `details` and `source_relation` need VIEWER on the datastore
/// of every catalogued end (else null and empty).
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct Evidence {
    /// The datastore type read, or the OpenLineage producer.
    pub provider: String,
    /// `structured_query_history`, ..., `run_event`, `job_event`.
    pub evidence_type: String,
    /// `provider`, `tributary` or `asserted`.
    pub authorship: String,
    pub source_relation: String,
    pub observed_at: Option<String>,
    pub first_observed_operation_id: Option<i64>,
    pub last_observed_operation_id: Option<i64>,
    pub details: Option<Value>,
    pub retired_at: Option<String>,
}

/// Evidence in graph answers: without `details` and `retired_at`.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct GraphEvidence {
    pub provider: String,
    pub evidence_type: String,
    pub authorship: String,
    pub source_relation: String,
    pub observed_at: Option<String>,
    pub first_observed_operation_id: Option<i64>,
    pub last_observed_operation_id: Option<i64>,
}

/// A lineage edge, as Create, Get, Update and List answer it.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct Edge {
    pub id: i64,
    pub created: String,
    pub source_container_id: Option<i64>,
    pub source_field_id: Option<i64>,
    pub target_container_id: Option<i64>,
    pub target_field_id: Option<i64>,
    /// Set instead of a container id when that end is an asset outside the catalog.
    pub source_external_fqn: Option<String>,
    pub target_external_fqn: Option<String>,
    pub description: Option<String>,
    /// `manual`, `catalog_import`, `inferred`, `openlineage`, `external`, a datastore type.
    pub source_type: String,
    /// What introduced the edge (`CTAS`, `INSERT_INTO`, `run_event`, ...); null for manual edges.
    pub operation: Option<String>,
    /// Field edges: the value passed through a transformation.
    pub derived: Option<bool>,
    pub evidence: Vec<Evidence>,
    pub last_asserted_at: Option<String>,
    pub retired_at: Option<String>,
    pub source_container: Option<ContainerRef>,
    pub source_field: Option<FieldRef>,
    pub target_container: Option<ContainerRef>,
    pub target_field: Option<FieldRef>,
}

/// A page of a list: `page` from 1, `size` 1 to 1,000.
#[derive(Serialize, ToSchema, Debug)]
pub struct Page<T: ToSchema> {
    pub items: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub size: i64,
    pub pages: i64,
}

impl<T: ToSchema> Page<T> {
    pub fn new<D>(p: domain::Page<D>, wrap: impl FnMut(D) -> T) -> Self {
        let pages = p.pages();
        Page {
            total: p.total,
            page: p.page.page,
            size: p.page.size,
            pages,
            items: p.items.into_iter().map(wrap).collect(),
        }
    }
}

#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct DatastoreRef {
    pub id: i64,
    pub name: String,
    pub store_type: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub enrichment_only: bool,
}

/// A container in a lineage graph, with whether it has lineage up and down and is the centre.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct GraphNode {
    /// Always `container`.
    pub node_type: String,
    pub id: i64,
    pub name: Option<String>,
    /// `database.schema.name`.
    pub qualified_name: Option<String>,
    pub display_name: Option<String>,
    pub container_type: Option<String>,
    pub table_type: Option<String>,
    pub datastore: Option<DatastoreRef>,
    pub field_count: i64,
    pub linked_field_count: i64,
    pub is_target: bool,
    pub active_anomaly_count: i64,
    pub purpose: Option<String>,
    /// Connections upstream that are not in this answer.
    pub has_upstream: bool,
    /// Connections downstream that are not in this answer.
    pub has_downstream: bool,
}

/// A container edge of a graph.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct GraphEdge {
    pub id: i64,
    pub source_container_id: Option<i64>,
    pub source_field_id: Option<i64>,
    pub target_container_id: Option<i64>,
    pub target_field_id: Option<i64>,
    pub description: Option<String>,
    pub source_type: String,
    pub operation: Option<String>,
    pub evidence: Vec<GraphEvidence>,
}

/// An asset outside the catalog.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct ExternalNode {
    /// Always `external`.
    pub node_type: String,
    /// `ext:<source_type>:<fqn>`.
    pub id: String,
    pub fqn: String,
    pub source_type: String,
}

/// An edge with one end outside the catalog, referenced by its node id.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct ExternalEdge {
    pub id: i64,
    pub source_container_id: Option<i64>,
    pub source_field_id: Option<i64>,
    pub target_container_id: Option<i64>,
    pub target_field_id: Option<i64>,
    pub source_node_id: Option<String>,
    pub target_node_id: Option<String>,
    pub description: Option<String>,
    pub source_type: String,
    pub operation: Option<String>,
    pub evidence: Vec<GraphEvidence>,
}

/// The lineage graph around a container.
#[derive(Serialize, ToSchema, Debug)]
pub struct Graph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    pub external_nodes: Vec<ExternalNode>,
    pub external_edges: Vec<ExternalEdge>,
}

/// A field of a container, with whether it has any live field-level edge.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct FieldItem {
    pub id: i64,
    pub name: String,
    pub display_name: Option<String>,
    pub status: String,
    pub latest_profile_id: Option<i64>,
    #[serde(rename = "type")]
    pub data_type: Option<String>,
    pub is_computed_field: bool,
    pub active_anomaly_count: i64,
    pub has_lineage: bool,
}

/// A field reached through field connections.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct ConnectedField {
    pub id: i64,
    pub name: String,
    pub display_name: Option<String>,
    pub status: String,
    pub latest_profile_id: Option<i64>,
    #[serde(rename = "type")]
    pub data_type: Option<String>,
    pub container_id: i64,
}

/// A field edge between connected fields.
#[derive(Serialize, ToSchema, Clone, Debug)]
pub struct ConnectionEdge {
    pub id: i64,
    pub source_container_id: Option<i64>,
    pub source_field_id: Option<i64>,
    pub target_container_id: Option<i64>,
    pub target_field_id: Option<i64>,
    pub description: Option<String>,
    pub source_type: String,
    pub operation: Option<String>,
    pub derived: Option<bool>,
}

#[derive(Serialize, ToSchema, Debug)]
pub struct FieldConnections {
    pub fields: Vec<ConnectedField>,
    pub edges: Vec<ConnectionEdge>,
}

/// One source's current value of a container's or field's metadata.
#[derive(Serialize, ToSchema, Debug)]
pub struct MetadataAssertion {
    /// Set when the value belongs to the container.
    pub container_id: Option<i64>,
    /// Set when the value belongs to one of its fields.
    pub field_id: Option<i64>,
    /// `description`, `tags`, `owners` or `type`.
    pub attribute: String,
    /// `user`, `sync`, `openlineage` or a data catalog's name.
    pub source: String,
    pub provider: String,
    pub value: Value,
    pub asserted_at: String,
    pub observed_at: String,
    pub details: Option<Value>,
    /// Whether this is the value shown.
    pub effective: bool,
}

impl MetadataAssertion {
    pub fn new(m: domain::MetadataAssertion, effective: bool) -> Self {
        MetadataAssertion {
            container_id: m.field_id.is_none().then_some(m.container_id),
            field_id: m.field_id,
            attribute: m.attribute,
            source: m.source,
            provider: m.provider,
            value: m.value,
            asserted_at: ts(m.asserted_at),
            observed_at: ts(m.observed_at),
            details: m.details,
            effective,
        }
    }
}

/// An error: `{"detail": "..."}` (defined with the other answers the router's own routes send).
pub use crate::api::answers::Detail;

/// Invalid input on the `/api/lineage/...` routes: `{"detail": [{"type", "loc", "msg"}]}`, `loc` naming the parameter.
#[derive(Serialize, ToSchema)]
pub struct ValidationError {
    pub detail: Vec<ValidationItem>,
}

#[derive(Serialize, ToSchema)]
pub struct ValidationItem {
    /// `value_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where: `["body", "source_type"]`, `["query", "depth"]`, `["path", "id"]`.
    pub loc: Vec<String>,
    /// What to fix.
    pub msg: String,
}

/// What an answer's shapes need beyond the service's answer, read by the service once per
/// kind (`Want::read`); the shapes below decide what of it the caller sees.
pub use crate::service::records::{Records as Lookups, Want};

impl Lookups {
    pub fn container_ref(&self, id: Id) -> Option<ContainerRef> {
        self.containers.get(&id).map(|c| ContainerRef {
            id: c.id,
            name: c.name.clone(),
            display_name: c.display_name.clone(),
            container_type: c.container_type.clone(),
            datastore_id: c.datastore_id,
            datastore_name: self.datastores.get(&c.datastore_id).map(|d| d.name.clone()),
        })
    }

    pub fn field_ref(&self, id: Id) -> Option<FieldRef> {
        self.fields.get(&id).map(|f| FieldRef {
            id: f.id,
            name: f.name.clone(),
            display_name: f.display_name.clone(),
            data_type: f.data_type.clone(),
            status: f.status.clone(),
            container_id: f.container_id,
        })
    }

    /// GraphQL's rule (`evidence_visible`): VIEWER on the datastore of every catalogued end;
    /// unrestricted admins always; a deleted container grants nothing.
    pub fn evidence_visible(&self, caller: &Caller, edge: &domain::Edge) -> bool {
        caller.unrestricted_admin
            || [&edge.source, &edge.target]
                .into_iter()
                .filter_map(End::container_id)
                .all(|cid| self.containers.get(&cid).is_some_and(|c| caller.has(c.datastore_id, Permission::Viewer)))
    }

    fn evidence_of(&self, caller: &Caller, edge: &domain::Edge) -> (bool, &[domain::Evidence]) {
        let visible = self.evidence_visible(caller, edge);
        (visible, self.evidence.get(&edge.id).map_or(&[][..], Vec::as_slice))
    }

    pub fn edge(&self, caller: &Caller, e: domain::Edge) -> Edge {
        let (visible, evidence) = self.evidence_of(caller, &e);
        let evidence = evidence
            .iter()
            .map(|v| Evidence {
                provider: v.provider.clone(),
                evidence_type: v.evidence_type.clone(),
                authorship: v.authorship.clone(),
                source_relation: if visible { v.source_relation.clone().unwrap_or_default() } else { String::new() },
                observed_at: ots(v.observed_at),
                first_observed_operation_id: v.first_observed_operation_id,
                last_observed_operation_id: v.last_observed_operation_id,
                details: if visible { v.details.clone() } else { None },
                retired_at: ots(v.retired_at),
            })
            .collect();
        Edge {
            id: e.id,
            created: ts(e.created),
            source_container_id: container_end(&e.source),
            source_field_id: field_end(&e.source),
            target_container_id: container_end(&e.target),
            target_field_id: field_end(&e.target),
            source_external_fqn: e.source.external_fqn().map(str::to_string),
            target_external_fqn: e.target.external_fqn().map(str::to_string),
            source_container: container_end(&e.source).and_then(|id| self.container_ref(id)),
            source_field: field_end(&e.source).and_then(|id| self.field_ref(id)),
            target_container: container_end(&e.target).and_then(|id| self.container_ref(id)),
            target_field: field_end(&e.target).and_then(|id| self.field_ref(id)),
            description: e.description,
            source_type: e.source_type,
            operation: e.operation,
            derived: e.derived,
            evidence,
            last_asserted_at: ots(e.last_asserted_at),
            retired_at: ots(e.retired_at),
        }
    }

    fn graph_evidence(&self, caller: &Caller, e: &domain::Edge) -> Vec<GraphEvidence> {
        let (visible, evidence) = self.evidence_of(caller, e);
        evidence
            .iter()
            .map(|v| GraphEvidence {
                provider: v.provider.clone(),
                evidence_type: v.evidence_type.clone(),
                authorship: v.authorship.clone(),
                source_relation: if visible { v.source_relation.clone().unwrap_or_default() } else { String::new() },
                observed_at: ots(v.observed_at),
                first_observed_operation_id: v.first_observed_operation_id,
                last_observed_operation_id: v.last_observed_operation_id,
            })
            .collect()
    }

    pub fn graph_edge(&self, caller: &Caller, e: domain::Edge) -> GraphEdge {
        GraphEdge {
            id: e.id,
            source_container_id: container_end(&e.source),
            source_field_id: field_end(&e.source),
            target_container_id: container_end(&e.target),
            target_field_id: field_end(&e.target),
            evidence: self.graph_evidence(caller, &e),
            description: e.description,
            source_type: e.source_type,
            operation: e.operation,
        }
    }

    pub fn external_edge(&self, caller: &Caller, e: domain::Edge) -> ExternalEdge {
        let node = |end: &End| end.external_fqn().map(|f| service::external_node_id(&e.source_type, f));
        ExternalEdge {
            id: e.id,
            source_container_id: container_end(&e.source),
            source_field_id: field_end(&e.source),
            target_container_id: container_end(&e.target),
            target_field_id: field_end(&e.target),
            source_node_id: node(&e.source),
            target_node_id: node(&e.target),
            evidence: self.graph_evidence(caller, &e),
            description: e.description,
            source_type: e.source_type,
            operation: e.operation,
        }
    }

    pub fn graph_node(&self, n: &service::GraphNode) -> GraphNode {
        let c = self.containers.get(&n.container_id);
        let stats = self.stats.get(&n.container_id);
        GraphNode {
            node_type: "container".into(),
            id: n.container_id,
            name: c.map(|c| c.name.clone()),
            qualified_name: c.map(|c| container_key(c.database.as_deref(), c.schema.as_deref(), &c.name)),
            display_name: c.and_then(|c| c.display_name.clone()),
            container_type: c.map(|c| c.container_type.clone()),
            table_type: c.and_then(|c| c.table_type.clone()),
            datastore: c.and_then(|c| self.datastores.get(&c.datastore_id)).map(|d| DatastoreRef {
                id: d.id,
                name: d.name.clone(),
                store_type: d.store_type.clone(),
                kind: d.kind.clone(),
                enrichment_only: d.enrichment_only,
            }),
            field_count: stats.map_or(0, |s| s.field_count),
            linked_field_count: stats.map_or(0, |s| s.linked_field_count),
            is_target: n.is_target,
            active_anomaly_count: c.map_or(0, |c| c.active_anomaly_count),
            purpose: c.and_then(|c| c.purpose.clone()),
            has_upstream: n.has_upstream,
            has_downstream: n.has_downstream,
        }
    }

    /// The graph answer: every node's record, datastore and counts and every edge's evidence
    /// read in one batch per kind.
    pub async fn graph(lineage: &Lineage, caller: &Caller, g: service::LineageGraph) -> Result<Graph, Error> {
        let nodes: BTreeSet<Id> = g.nodes.iter().map(|n| n.container_id).collect();
        let mut want = Want::default().edges(g.edges.iter().chain(&g.external_edges), true);
        want.fields.clear();
        want.containers.extend(&nodes);
        want.stats = nodes;
        let l = want.read(lineage).await?;
        Ok(Graph {
            nodes: g.nodes.iter().map(|n| l.graph_node(n)).collect(),
            edges: g.edges.into_iter().map(|e| l.graph_edge(caller, e)).collect(),
            external_nodes: g
                .external_nodes
                .into_iter()
                .map(|n| ExternalNode {
                    node_type: "external".into(),
                    id: n.id,
                    fqn: n.fqn,
                    source_type: n.source_type,
                })
                .collect(),
            external_edges: g.external_edges.into_iter().map(|e| l.external_edge(caller, e)).collect(),
        })
    }

    /// Full edges, with their ends and evidence read in one batch per kind.
    pub async fn edges(lineage: &Lineage, caller: &Caller, edges: Vec<domain::Edge>) -> Result<Vec<Edge>, Error> {
        let l = Want::default().edges(&edges, true).read(lineage).await?;
        Ok(edges.into_iter().map(|e| l.edge(caller, e)).collect())
    }
}

pub fn connection_edge(e: domain::Edge) -> ConnectionEdge {
    ConnectionEdge {
        id: e.id,
        source_container_id: container_end(&e.source),
        source_field_id: field_end(&e.source),
        target_container_id: container_end(&e.target),
        target_field_id: field_end(&e.target),
        description: e.description,
        source_type: e.source_type,
        operation: e.operation,
        derived: e.derived,
    }
}
