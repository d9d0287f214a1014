//! Lineage by table name (seed 004's read API, `container(qualifiedName:)`): a table is named
//! by any form `search` answers and the README shows, so the same table in two datastores stays
//! reachable. In order: its id (digits, as search hits and every answer give it); an OpenLineage
//! `<namespace>/<name>` of a namespace a datastore lists (resolved as the events' datasets are,
//! `Lineage::dataset_node`); `<datastore>:<database.schema.table>`; else a qualified name or
//! any end of it across every datastore, with the one name matcher (`name_candidates`,
//! `Store::containers_by_names`, `match_rank`). A name two containers answer equally well is
//! ambiguous, and the answer lists each candidate as `<datastore>:<qualified name>`, the form
//! that names it alone. A column is a field of that container.

use super::{match_rank, name_candidates, Lineage};
use crate::domain::{container_key, Container, Datastore, Direction, Edge, Field, Id};
use crate::error::{Error, Result};
use crate::ingest::openlineage::naming::normalize_namespace;

/// At most this many candidates are named in an "ambiguous" message.
const NAMED_CANDIDATES: usize = 10;

/// A container's name that no other container shares: `<datastore>:<database.schema.name>`, as
/// `search` matches it and the by-name routes take it.
pub fn unique_name(datastore: &str, c: &Container) -> String {
    format!("{datastore}:{}", container_key(c.database.as_deref(), c.schema.as_deref(), &c.name))
}

/// `<namespace>/<name>` where a datastore lists the namespace (folded as the ingest folds it);
/// the longest such namespace wins. The name is what follows its `/`.
fn namespace_prefix<'a>(text: &'a str, datastores: &[Datastore]) -> Option<(&'a str, &'a str)> {
    let listed: Vec<String> =
        datastores.iter().flat_map(|d| d.namespaces.iter().map(|n| normalize_namespace(n))).collect();
    if listed.is_empty() {
        return None;
    }
    text.match_indices('/')
        .rev()
        .map(|(i, _)| (&text[..i], &text[i + 1..]))
        .find(|(ns, name)| !ns.is_empty() && !name.trim().is_empty() && listed.contains(&normalize_namespace(ns)))
}

/// `<datastore>:<name>` for a datastore of that name (case-insensitive; the longest name wins).
fn datastore_prefix<'a, 'd>(text: &'a str, datastores: &'d [Datastore]) -> Option<(&'d Datastore, &'a str)> {
    datastores
        .iter()
        .filter_map(|d| {
            let n = d.name.len();
            // `get` is None off a character boundary: a request's text never panics here.
            let head = text.get(..n)?;
            let rest = text.get(n..)?.strip_prefix(':')?;
            (!d.name.is_empty() && head.to_lowercase() == d.name.to_lowercase() && !rest.trim().is_empty())
                .then_some((d, rest))
        })
        .max_by_key(|(d, _)| d.name.len())
}

impl Lineage {
    /// The container a table name denotes, across every datastore, in any of the forms of the
    /// module's doc. `NotFound` when nothing matches; `BadInput` naming the candidates (as
    /// `<datastore>:<qualified name>`) when several match equally well.
    pub async fn resolve_table(&self, what: &str, name: &str) -> Result<Container> {
        self.resolve_table_in(what, name, None).await
    }

    /// `resolve_table` among one datastore's containers, or all when `None`.
    pub async fn resolve_table_in(&self, what: &str, name: &str, datastore: Option<Id>) -> Result<Container> {
        let text = name.trim();
        if text.is_empty() {
            return Err(Error::BadInput(format!(
                "{what} is required: a table name such as database.schema.table, datastore:database.schema.table or its id"
            )));
        }
        if text.len() > 1024 {
            return Err(Error::BadInput(format!("{what} is longer than 1024 characters")));
        }
        let in_scope = |c: &Container| datastore.is_none_or(|d| d == c.datastore_id);
        // Its id. A table named by digits alone is still found by name when no id matches.
        if text.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(id) = text.parse::<Id>() {
                if let Some(c) = self.store.containers_by_ids(&[id]).await?.into_iter().find(in_scope) {
                    return Ok(c);
                }
            }
        }
        let datastores = self.store.list_datastores().await?;
        if let Some((namespace, rest)) = namespace_prefix(text, &datastores) {
            return self.resolve_dataset_table(what, namespace, rest, datastore).await;
        }
        if let Some((d, rest)) = datastore_prefix(text, &datastores) {
            if let Some(other) = datastore.filter(|x| *x != d.id) {
                return Err(Error::NotFound(format!("Table {text:?} is not in datastore {other}")));
            }
            return self.match_table(what, rest, Some(d.id), &datastores).await.map_err(|e| match e {
                Error::NotFound(_) => {
                    Error::NotFound(format!("Table {:?} not found in datastore {}", rest.trim(), d.name))
                }
                e => e,
            });
        }
        self.match_table(what, text, datastore, &datastores).await
    }

    /// The container an OpenLineage dataset (namespace and name) resolves to, as the ingest
    /// resolves it: `NotFound` when it is not catalogued (saying so when its lineage is kept
    /// under an external asset).
    pub async fn resolve_dataset_table(
        &self,
        what: &str,
        namespace: &str,
        name: &str,
        datastore: Option<Id>,
    ) -> Result<Container> {
        super::require_name(what, name)?;
        let dataset = format!("{}/{}", namespace.trim(), name.trim());
        match self.dataset_node(namespace, name).await? {
            Some(Ok(c)) if datastore.is_none_or(|d| d == c.datastore_id) => Ok(c),
            Some(Ok(_)) | None => Err(Error::NotFound(format!("No catalogued table is the OpenLineage dataset {dataset:?}"))),
            Some(Err(ext)) => Err(Error::NotFound(format!(
                "The OpenLineage dataset {dataset:?} is not catalogued; its lineage is kept under the external asset {}",
                ext.id
            ))),
        }
    }

    /// The best match of a qualified name or an end of it (exact `database.schema.name`, then
    /// one ending the other at a dot, then a path suffix), case-insensitive.
    async fn match_table(&self, what: &str, name: &str, datastore: Option<Id>, all: &[Datastore]) -> Result<Container> {
        let wanted = name.trim().to_lowercase();
        if wanted.is_empty() {
            return Err(Error::BadInput(format!("{what} names a datastore but no table after it")));
        }
        let only = datastore.map(|d| vec![d]);
        let found = self.store.containers_by_names(&name_candidates(&wanted), only.as_deref()).await?;
        let ranked: Vec<(u8, &Container)> =
            found.iter().map(|c| (match_rank(&wanted, c), c)).filter(|(r, _)| *r > 0).collect();
        let Some(best) = ranked.iter().map(|(r, _)| *r).max() else {
            return Err(Error::NotFound(format!("Table {:?} not found", name.trim())));
        };
        let mut top: Vec<&Container> = ranked.iter().filter(|(r, _)| *r == best).map(|(_, c)| *c).collect();
        if top.len() == 1 {
            return Ok(top[0].clone());
        }
        top.sort_by_key(|c| c.id);
        let named: Vec<String> = top
            .iter()
            .take(NAMED_CANDIDATES)
            .map(|c| {
                let ds = all.iter().find(|d| d.id == c.datastore_id).map_or("?", |d| d.name.as_str());
                format!("{} (container {})", unique_name(ds, c), c.id)
            })
            .collect();
        let more = top.len().saturating_sub(NAMED_CANDIDATES);
        Err(Error::BadInput(format!(
            "{what} {:?} is ambiguous: it matches {}{}; give one of these names, or the container id",
            name.trim(),
            named.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        )))
    }

    /// A column of a container by name (case-insensitive), `NotFound` when it has none.
    pub async fn resolve_column(&self, container: &Container, name: &str) -> Result<Field> {
        let wanted = name.trim().to_lowercase();
        if wanted.is_empty() {
            return Err(Error::BadInput("column is required: a column name of the table".into()));
        }
        let fields = self.store.fields_of_containers(&[container.id]).await?;
        // Of two names that fold alike the later field wins, as in every name lookup.
        fields
            .into_iter()
            .rev()
            .find(|f| f.name.to_lowercase() == wanted)
            .ok_or_else(|| Error::NotFound(format!("Column {:?} not found in table {:?}", name.trim(), container.name)))
    }

    /// The column-level lineage of a container (seed 004's `SHOW LINEAGE COLUMNS`): the live field
    /// edges into its fields, in one read.
    pub async fn column_lineage(&self, container_id: Id) -> Result<Vec<Edge>> {
        let fields: Vec<Id> = self.store.fields_of_containers(&[container_id]).await?.iter().map(|f| f.id).collect();
        if fields.is_empty() {
            return Ok(Vec::new());
        }
        let mut edges = self.store.field_edges_of(&fields, Direction::Upstream).await?;
        edges.sort_by_key(|e| e.id);
        edges.dedup_by_key(|e| e.id);
        Ok(edges)
    }
}
