//! `search`'s types: `SearchKind`, `SearchMatch` and `SearchHit` (the answer of
//! `service::search`, with the hit's container or field a loader read away).

use async_graphql::{ComplexObject, Context, Enum, SimpleObject};

use super::shared::{load_container, load_field};
use super::{Container, Field, GqlResult};
use crate::domain::Id;
use crate::service::search::{self, MatchRank};

/// What `search` looks for: containers, fields, external assets, jobs (by name or `namespace/name`).
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "search::SearchKind")]
pub enum SearchKind {
    Container,
    Field,
    External,
    Job,
}

/// How a hit matched: the whole qualified name, its start, or a part.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "MatchRank")]
pub enum SearchMatch {
    Exact,
    Prefix,
    Substring,
}

/// One thing found by `search`.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct SearchHit {
    pub kind: SearchKind,
    /// The id the rest of the API takes: a container's or field's id (as text), an external
    /// asset's `ext:<source_type>:<fqn>` (what `externalLineageGraph` takes).
    pub id: String,
    pub container_id: Option<Id>,
    pub field_id: Option<Id>,
    /// `database.schema.name` (`.column` for a field), or the external asset's fqn.
    pub qualified_name: String,
    pub datastore_id: Option<Id>,
    pub datastore_name: Option<String>,
    /// The spelling that matched: the qualified name, or it after a datastore name
    /// (`warehouse:shop.raw.orders`) or an OpenLineage namespace (`postgres://db:5432/shop.raw.orders`).
    pub matched: String,
    #[graphql(name = "match")]
    pub rank: SearchMatch,
}

#[ComplexObject]
impl SearchHit {
    /// The container found, or the field's container.
    async fn container(&self, ctx: &Context<'_>) -> GqlResult<Option<Container>> {
        match self.container_id {
            Some(id) => load_container(ctx, id).await,
            None => Ok(None),
        }
    }
    async fn field(&self, ctx: &Context<'_>) -> GqlResult<Option<Field>> {
        match self.field_id {
            Some(id) => load_field(ctx, id).await,
            None => Ok(None),
        }
    }
}

impl From<search::SearchHit> for SearchHit {
    fn from(h: search::SearchHit) -> Self {
        SearchHit {
            kind: h.kind.into(),
            id: h.id,
            container_id: h.container_id,
            field_id: h.field_id,
            qualified_name: h.qualified_name,
            datastore_id: h.datastore_id,
            datastore_name: h.datastore_name,
            matched: h.matched,
            rank: h.rank.into(),
        }
    }
}
