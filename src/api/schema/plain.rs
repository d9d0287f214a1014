//! Large lists answered without a future per field. async-graphql resolves every selected field
//! of every item through a boxed future, polled in a `FuturesUnordered` per object; for the
//! 10,000 items of an `impact` or `piiFlow` answer that machinery, not the data, was most of the
//! GraphQL layer's time. When every field an item's selection asks for is already in hand (the
//! records were prefetched and attached), `PlainList` builds the item's value directly from the
//! selection set; any other selection (a field that reads through a loader, takes arguments or
//! carries a directive, a fragment, a repeated response key) goes to async-graphql's own resolvers,
//! unchanged. The answer is the same either way (tests/integration/graph.rs compares the two).
//! Here the machinery (`PlainList`, `PlainObject`); the types answered so, each with the fields
//! it holds, in `plain_types.rs`.

use std::borrow::Cow;

use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{Field as Selected, Selection, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::{ContextSelectionSet, OutputType, Positioned, ServerResult, Value};

/// What a field of an item is when it needs no resolver.
pub(super) enum Plain<'a> {
    Value(Value),
    Object(&'a dyn PlainObject),
    /// An object made for the answer (a view of a record held otherwise).
    Owned(Box<dyn PlainObject + 'a>),
    Objects(Vec<Box<dyn PlainObject + 'a>>),
}

/// An output type whose fields can be read off the value it holds.
pub(super) trait PlainObject: Send + Sync {
    /// The GraphQL type's name (what `__typename` answers).
    fn type_name(&self) -> &'static str;
    /// The field's value when it is in hand; `None` when only its resolver can answer it.
    fn plain(&self, field: &str) -> Option<Plain<'_>>;
}

/// The value of an object under a selection set, or `None` when some part of the selection
/// needs the resolvers.
pub(super) fn object(obj: &dyn PlainObject, set: &SelectionSet) -> Option<Value> {
    let mut map = IndexMap::with_capacity(set.items.len());
    for selection in &set.items {
        let Selection::Field(field) = &selection.node else { return None };
        let key = field.node.response_key().node.clone();
        let value = field_value(obj, &field.node)?;
        // A repeated key merges the two selections: the resolvers' job.
        if map.insert(key, value).is_some() {
            return None;
        }
    }
    Some(Value::Object(map))
}

fn field_value(obj: &dyn PlainObject, field: &Selected) -> Option<Value> {
    if !field.arguments.is_empty() || !field.directives.is_empty() {
        return None;
    }
    let name = field.name.node.as_str();
    if name == "__typename" {
        return Some(Value::String(obj.type_name().to_owned()));
    }
    Some(match obj.plain(name)? {
        Plain::Value(v) => v,
        Plain::Object(o) => object(o, &field.selection_set.node)?,
        Plain::Owned(o) => object(o.as_ref(), &field.selection_set.node)?,
        Plain::Objects(items) => {
            Value::List(items.iter().map(|o| object(o.as_ref(), &field.selection_set.node)).collect::<Option<_>>()?)
        }
    })
}

/// A list field that answers plainly when it can (see the module's comment); to the schema it
/// is the `Vec<T>` it holds.
pub struct PlainList<T>(pub Vec<T>);

impl<T> From<Vec<T>> for PlainList<T> {
    fn from(items: Vec<T>) -> Self {
        PlainList(items)
    }
}

impl<T: OutputType + PlainObject> OutputType for PlainList<T> {
    fn type_name() -> Cow<'static, str> {
        Vec::<T>::type_name()
    }

    fn qualified_type_name() -> String {
        Vec::<T>::qualified_type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        Vec::<T>::create_type_info(registry)
    }

    async fn resolve(&self, ctx: &ContextSelectionSet<'_>, field: &Positioned<Selected>) -> ServerResult<Value> {
        let set = &ctx.item.node;
        match self.0.iter().map(|item| object(item, set)).collect::<Option<Vec<Value>>>() {
            Some(items) => Ok(Value::List(items)),
            None => self.0.resolve(ctx, field).await,
        }
    }
}

/// Leaf values as async-graphql's scalars write them.
pub(super) fn id(v: i64) -> Option<Plain<'static>> {
    Some(Plain::Value(Value::from(v)))
}
pub(super) fn flag(v: bool) -> Option<Plain<'static>> {
    Some(Plain::Value(Value::Boolean(v)))
}
pub(super) fn text(v: &str) -> Option<Plain<'static>> {
    Some(Plain::Value(Value::String(v.to_owned())))
}
pub(super) fn opt_text(v: Option<&str>) -> Option<Plain<'static>> {
    Some(Plain::Value(v.map_or(Value::Null, |s| Value::String(s.to_owned()))))
}
pub(super) fn opt_id(v: Option<i64>) -> Option<Plain<'static>> {
    Some(Plain::Value(v.map_or(Value::Null, Value::from)))
}
pub(super) fn opt_flag(v: Option<bool>) -> Option<Plain<'static>> {
    Some(Plain::Value(v.map_or(Value::Null, Value::Boolean)))
}
pub(super) fn time(v: crate::domain::Timestamp) -> Option<Plain<'static>> {
    use async_graphql::ScalarType;
    Some(Plain::Value(super::DateTime(v).to_value()))
}
pub(super) fn opt_time(v: Option<crate::domain::Timestamp>) -> Option<Plain<'static>> {
    v.map_or(Some(Plain::Value(Value::Null)), time)
}
pub(super) fn json(v: Option<&serde_json::Value>) -> Option<Plain<'static>> {
    // As `Json<T>` answers: the JSON as a GraphQL value.
    Some(Plain::Value(v.map_or(Value::Null, |v| async_graphql::to_value(v).unwrap_or_default())))
}
pub(super) fn object_or_null<'a>(v: Option<&'a dyn PlainObject>) -> Option<Plain<'a>> {
    Some(v.map_or(Plain::Value(Value::Null), Plain::Object))
}
