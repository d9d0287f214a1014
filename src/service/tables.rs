//! Lineage by table name (seed 004's read API): a qualified name resolves to one container with
//! the one name matcher (`name_candidates`, `Store::containers_by_names`, `match_rank`), a name
//! two containers answer equally well is ambiguous, and a column is a field of that container.

use super::{match_rank, name_candidates, Lineage};
use crate::domain::{container_key, Container, Direction, Edge, Field, Id};
use crate::error::{Error, Result};

/// At most this many candidates are named in an "ambiguous" message.
const NAMED_CANDIDATES: usize = 10;

impl Lineage {
    /// The container a table name denotes, across every datastore: the best match by the rules of
    /// `match_container` (exact `database.schema.name`, then one ending the other at a dot, then
    /// a path suffix), case-insensitive. `NotFound` when nothing matches; `BadInput` naming the
    /// candidates when several match equally well (qualify the name, or use the container id).
    pub async fn resolve_table(&self, what: &str, name: &str) -> Result<Container> {
        self.resolve_table_in(what, name, None).await
    }

    /// `resolve_table` among one datastore's containers, or all when `None`.
    pub async fn resolve_table_in(&self, what: &str, name: &str, datastore: Option<Id>) -> Result<Container> {
        let wanted = name.trim().to_lowercase();
        if wanted.is_empty() {
            return Err(Error::BadInput(format!("{what} is required: a table name such as database.schema.table")));
        }
        if wanted.len() > 1024 {
            return Err(Error::BadInput(format!("{what} is longer than 1024 characters")));
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
        let datastores = self.store.datastores_by_ids(&top.iter().map(|c| c.datastore_id).collect::<Vec<_>>()).await?;
        let named: Vec<String> = top
            .iter()
            .take(NAMED_CANDIDATES)
            .map(|c| {
                let ds = datastores.iter().find(|d| d.id == c.datastore_id).map_or("?", |d| d.name.as_str());
                format!(
                    "{} in datastore {ds} (container {})",
                    container_key(c.database.as_deref(), c.schema.as_deref(), &c.name),
                    c.id
                )
            })
            .collect();
        let more = top.len().saturating_sub(NAMED_CANDIDATES);
        Err(Error::BadInput(format!(
            "{what} {:?} is ambiguous: it matches {}{}; give more of the qualified name",
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
