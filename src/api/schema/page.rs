//! The paged lists: one generic `Page<T>`, named per item type in the schema (`EdgePage`,
//! `ContainerPage`, `FieldPage`, `StoredEventPage`). A new paged list adds its name to the
//! `concrete` list below and an alias beside the others.

use async_graphql::{OutputType, SimpleObject};

use super::{Container, Field, Job, LineageEdge, Run, StoredEvent};
use crate::domain;

// One page of a list, as `domain::Page` holds it, with each item wrapped in its output type.
// (A `//` comment: a doc comment here would become the description of every page type.)
#[derive(SimpleObject)]
#[graphql(
    concrete(name = "EdgePage", params(LineageEdge)),
    concrete(name = "ContainerPage", params(Container)),
    concrete(name = "FieldPage", params(Field)),
    concrete(name = "StoredEventPage", params(StoredEvent)),
    concrete(name = "JobPage", params(Job)),
    concrete(name = "RunPage", params(Run))
)]
pub struct Page<T: OutputType> {
    pub items: Vec<T>,
    pub total: i64,
    pub page: i64,
    pub size: i64,
    pub pages: i64,
}

pub type EdgePage = Page<LineageEdge>;
pub type ContainerPage = Page<Container>;
pub type FieldPage = Page<Field>;
pub type StoredEventPage = Page<StoredEvent>;

impl<T: OutputType> Page<T> {
    /// The domain page with every item wrapped by `wrap` (the output type's constructor).
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
