//! The types answered plainly (`plain.rs`): each lists the fields it holds, by their GraphQL
//! names, with the value its resolver answers; a field missing here (a new one included) simply
//! goes through the resolvers. Apart from `plain.rs`, so that the machinery, which `lineage.rs`
//! names in its answers' types, does not import the types it answers.

use async_graphql::Value;

use super::lineage::{GraphNode, ImpactedContainer, Interval, PiiField, Shown};
use super::plain::{
    flag, id, json, object_or_null, opt_flag, opt_id, opt_text, opt_time, text, time, Plain, PlainObject,
};
use super::shared::{container_end, field_end};
use super::{Container, Datastore, ExternalNode, Field, LineageEdge};

impl PlainObject for Datastore {
    fn type_name(&self) -> &'static str {
        "Datastore"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        let d = &self.0;
        match field {
            "id" => id(d.id),
            "name" => text(&d.name),
            "type" => text(&d.kind),
            "storeType" => opt_text(d.store_type.as_deref()),
            "namespaces" => {
                Some(Plain::Value(Value::List(d.namespaces.iter().map(|n| Value::String(n.clone())).collect())))
            }
            "enrichmentOnly" => flag(d.enrichment_only),
            _ => None,
        }
    }
}

impl PlainObject for Container {
    fn type_name(&self) -> &'static str {
        "Container"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        container_field(&self.0, field)
    }
}

/// A container record seen as a `Container` without copying it.
struct ContainerView<'a>(&'a crate::domain::Container);

impl PlainObject for ContainerView<'_> {
    fn type_name(&self) -> &'static str {
        "Container"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        container_field(self.0, field)
    }
}

fn container_field<'a>(c: &'a crate::domain::Container, field: &str) -> Option<Plain<'a>> {
    match field {
        "id" => id(c.id),
        "name" => text(&c.name),
        "displayName" => opt_text(c.display_name.as_deref()),
        "containerType" => text(&c.container_type),
        "tableType" => opt_text(c.table_type.as_deref()),
        "database" => opt_text(c.database.as_deref()),
        "schema" => opt_text(c.schema.as_deref()),
        "qualifiedName" => Some(Plain::Value(Value::String(crate::domain::container_key(
            c.database.as_deref(),
            c.schema.as_deref(),
            &c.name,
        )))),
        "datastoreId" => id(c.datastore_id),
        "purpose" => opt_text(c.purpose.as_deref()),
        "activeAnomalyCount" => id(c.active_anomaly_count),
        _ => None,
    }
}

impl PlainObject for Field {
    fn type_name(&self) -> &'static str {
        "Field"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        let f = &self.0;
        match field {
            "id" => id(f.id),
            "name" => text(&f.name),
            "displayName" => opt_text(f.display_name.as_deref()),
            "type" => opt_text(f.data_type.as_deref()),
            "status" => text(&f.status),
            "latestProfileId" => opt_id(f.latest_profile_id),
            "isComputedField" => flag(f.is_computed_field),
            "activeAnomalyCount" => id(f.active_anomaly_count),
            "containerId" => id(f.container_id),
            _ => None,
        }
    }
}

impl PlainObject for Interval {
    fn type_name(&self) -> &'static str {
        "Interval"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        match field {
            "from" => time(self.from.0),
            "to" => opt_time(self.to.map(|t| t.0)),
            _ => None,
        }
    }
}

impl PlainObject for LineageEdge {
    fn type_name(&self) -> &'static str {
        "LineageEdge"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        let e = &self.0;
        let node_id = |end: &crate::domain::End| {
            Some(Plain::Value(
                end.external_fqn()
                    .map_or(Value::Null, |f| Value::String(crate::service::external_node_id(&e.source_type, f))),
            ))
        };
        match field {
            "id" => id(e.id),
            "created" => time(e.created),
            "sourceContainerId" => opt_id(container_end(&e.source)),
            "sourceFieldId" => opt_id(field_end(&e.source)),
            "targetContainerId" => opt_id(container_end(&e.target)),
            "targetFieldId" => opt_id(field_end(&e.target)),
            "sourceExternalFqn" => opt_text(e.source.external_fqn()),
            "targetExternalFqn" => opt_text(e.target.external_fqn()),
            "sourceNodeId" => node_id(&e.source),
            "targetNodeId" => node_id(&e.target),
            "description" => opt_text(e.description.as_deref()),
            "sourceType" => text(&e.source_type),
            "operation" => opt_text(e.operation.as_deref()),
            "derived" => opt_flag(e.derived),
            "transformations" => json(e.transformations.as_ref()),
            "lastAssertedAt" => opt_time(e.last_asserted_at),
            "retiredAt" => opt_time(e.retired_at),
            "intervals" => Some(Plain::Objects(
                e.intervals
                    .iter()
                    .map(|i| {
                        Box::new(Interval { from: super::DateTime(i.from), to: i.to.map(super::DateTime) })
                            as Box<dyn PlainObject>
                    })
                    .collect(),
            )),
            _ => None,
        }
    }
}

impl PlainObject for GraphNode {
    fn type_name(&self) -> &'static str {
        "GraphNode"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        match field {
            "nodeType" => return text(self.node_type),
            "id" => return id(self.id),
            "isTarget" => return flag(self.is_target),
            "hasUpstream" => return flag(self.has_upstream),
            "hasDownstream" => return flag(self.has_downstream),
            // Attached when the selection asked for it; otherwise the resolvers read it.
            "fieldCount" => return self.field_count.and_then(id),
            "datastore" => return object_or_null(self.datastore.as_ref()?.as_ref().map(|d| d as &dyn PlainObject)),
            _ => {}
        }
        // The rest comes from the container's record (the resolvers' when it was not attached):
        // the node's record fields are the `Container` fields of the same names (validation
        // has already refused any name `GraphNode` does not have).
        let c = self.record.as_deref()?;
        match field {
            "container" => Some(Plain::Owned(Box::new(ContainerView(c)))),
            _ => container_field(c, field),
        }
    }
}

impl PlainObject for ExternalNode {
    fn type_name(&self) -> &'static str {
        "ExternalNode"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        match field {
            "nodeType" => text(self.node_type),
            "id" => text(&self.id),
            "fqn" => text(&self.fqn),
            "sourceType" => text(&self.source_type),
            "isTarget" => flag(self.is_target),
            _ => None,
        }
    }
}

impl PlainObject for ImpactedContainer {
    fn type_name(&self) -> &'static str {
        "ImpactedContainer"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        match field {
            "distance" => id(self.distance),
            "via" => object_or_null(self.via.as_ref().map(|v| v as &dyn PlainObject)),
            "container" => object_or_null(self.record.as_ref()?.as_ref().map(|c| c as &dyn PlainObject)),
            _ => None,
        }
    }
}

impl PlainObject for PiiField {
    fn type_name(&self) -> &'static str {
        "PiiField"
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        match field {
            "distance" => id(self.distance),
            "derived" => flag(self.derived),
            "via" => Some(Plain::Object(&self.via)),
            "field" => object_or_null(self.record.as_ref()?.as_ref().map(|f| f as &dyn PlainObject)),
            _ => None,
        }
    }
}

impl<R: PlainObject> PlainObject for Shown<R> {
    fn type_name(&self) -> &'static str {
        match self {
            Shown::Full(r) => r.type_name(),
            Shown::Named(n) => n.type_name,
        }
    }
    fn plain(&self, field: &str) -> Option<Plain<'_>> {
        match (self, field) {
            (Shown::Full(r), _) => r.plain(field),
            (Shown::Named(n), "id") => id(n.id),
            (Shown::Named(n), "name") => text(&n.name),
            (Shown::Named(n), "containerId") => n.container_id.and_then(id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use async_graphql::parser::parse_query;
    use async_graphql::parser::types::{DocumentOperations, Selection, SelectionSet};

    use super::*;
    use crate::api::schema::plain::object;
    use crate::domain::{self, End};

    /// The selection set of the first field of `path` under the query's root, in turn.
    fn selection(query: &str, path: &[&str]) -> SelectionSet {
        let doc = parse_query(query).expect("parses");
        let DocumentOperations::Single(op) = doc.operations else { panic!("one operation") };
        let mut set = op.node.selection_set.node;
        for name in path {
            let found = set.items.into_iter().find_map(|s| match s.node {
                Selection::Field(f) if f.node.name.node.as_str() == *name => Some(f.node.selection_set.node),
                _ => None,
            });
            set = found.unwrap_or_else(|| panic!("{name} in {query}"));
        }
        set
    }

    fn impacted(record: Option<Option<Container>>) -> ImpactedContainer {
        let now = chrono::Utc::now();
        let edge = domain::Edge {
            id: 7,
            created: now,
            source: End::Container { id: 1 },
            target: End::Container { id: 2 },
            description: None,
            source_type: "openlineage".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: Some(now),
            retired_at: None,
            intervals: vec![domain::Interval { from: now, to: None }],
        };
        let record = record.map(|r| r.map(Shown::Full));
        ImpactedContainer { id: 2, distance: 1, via: Some(LineageEdge(edge)), record, health: None, as_of: None }
    }

    fn container() -> Container {
        Container::today(domain::Container {
            id: 2,
            datastore_id: 3,
            name: "orders".into(),
            database: None,
            schema: Some("s".into()),
            container_type: "table".into(),
            table_type: None,
            display_name: None,
            purpose: None,
            active_anomaly_count: 0,
        })
    }

    #[test]
    fn held_fields_answer_without_resolvers() {
        let set = selection(
            "{ impact(containerId: 1) { containers { distance d: distance container { id name schema } via { id sourceContainerId intervals { from to } } } } }",
            &["impact", "containers"],
        );
        let value = object(&impacted(Some(Some(container()))), &set).expect("answered plainly");
        let json = value.into_json().expect("json");
        assert_eq!(json["distance"], 1);
        assert_eq!(json["d"], 1);
        assert_eq!(json["container"], serde_json::json!({"id": 2, "name": "orders", "schema": "s"}));
        assert_eq!(json["via"]["sourceContainerId"], 1);
        assert_eq!(json["via"]["intervals"][0]["to"], serde_json::Value::Null);
        // A deleted container answers null, as its resolver does.
        let gone = object(&impacted(Some(None)), &set).expect("answered plainly").into_json().expect("json");
        assert_eq!(gone["container"], serde_json::Value::Null);
    }

    #[test]
    fn a_name_read_answers_only_ids_and_names() {
        let mut item = impacted(None);
        let named =
            super::super::lineage::Named { type_name: "Container", id: 2, name: "orders".into(), container_id: None };
        item.record = Some(Some(Shown::Named(named)));
        let names = selection(
            "{ impact(containerId: 1) { containers { container { __typename id name } } } }",
            &["impact", "containers"],
        );
        let json = object(&item, &names).expect("answered plainly").into_json().expect("json");
        assert_eq!(json["container"], serde_json::json!({"__typename": "Container", "id": 2, "name": "orders"}));
        // Anything else of it is the resolver's, which reads the whole record.
        let more = selection(
            "{ impact(containerId: 1) { containers { container { id schema } } } }",
            &["impact", "containers"],
        );
        assert!(object(&item, &more).is_none());
    }

    #[test]
    fn anything_else_goes_to_the_resolvers() {
        let item = impacted(Some(Some(container())));
        for query in [
            // A field read through a loader (with its permission check).
            "{ impact(containerId: 1) { containers { via { id evidence { provider } } } } }",
            // Arguments, directives, fragments, a repeated key.
            "{ impact(containerId: 1) { containers { container { fields(size: 5) { total } } } } }",
            "{ impact(containerId: 1) { containers { distance @skip(if: true) } } }",
            "{ impact(containerId: 1) { containers { ... on ImpactedContainer { distance } } } }",
            "{ impact(containerId: 1) { containers { distance distance } } }",
        ] {
            assert!(object(&item, &selection(query, &["impact", "containers"])).is_none(), "{query}");
        }
        // The record not attached: the resolvers read it.
        let set =
            selection("{ impact(containerId: 1) { containers { container { id } } } }", &["impact", "containers"]);
        assert!(object(&impacted(None), &set).is_none());
    }
}
