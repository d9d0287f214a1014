//! Search by the names people know (issue #30): one query string against containers (by name,
//! `database.schema.name`, datastore and name, OpenLineage namespace and name), fields
//! (`table.column`) and assets outside the catalog (fqn), ranked: an exact qualified match,
//! then a prefix, then a substring.
//!
//! The forms that name a scope are peeled here: `<datastore>:<name>` (also `<datastore>.` and
//! `<datastore>/`) searches that datastore for the rest, and `<namespace>/<name>` (or `:`) for a
//! namespace a datastore lists searches that datastore's containers for the rest and asks the
//! OpenLineage resolver (`dataset_node`, the naming conventions) for the exact dataset. The
//! store does the substring scans, each ranked (`Store::search_containers`, `search_fields`,
//! `search_externals`); this file merges the scopes, keeps each thing's best match and cuts the
//! list at `first`.
//!
//! # How it fits
//!
//! `Lineage::search_by_name` (GraphQL `search`): one query against containers, fields and external assets. It peels the
//! forms that name a scope (`<datastore>:<name>`, an OpenLineage `<namespace>/<name>` of a namespace a datastore lists,
//! which the resolver's `dataset_node` also resolves exactly), asks the store's ranked substring scans
//! (`Store::search_containers`, `search_fields`, `search_externals`: exact, then prefix, then the rest, in the
//! statement) for each scope, keeps each thing's best match and cuts at `first`. Jobs plug in at the one place marked
//! `JOBS PLUG IN HERE`. The scans read every live container (or field) of the scope: a substring has no index to seek,
//! and a search box asks for a few dozen hits. `impact`'s traversal (`transitive`) also collects the external ends it
//! meets as `Transitive.externals`, leaves at the distance of their edge, not counted by `limit`.

use std::collections::HashMap;

use super::{external_node_id, Lineage};
use crate::domain::{container_key, Container, Datastore, Id};
use crate::error::{Error, Result};

/// What `search` can find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SearchKind {
    Container,
    Field,
    External,
    Job,
}

pub const ALL_KINDS: [SearchKind; 4] =
    [SearchKind::Container, SearchKind::Field, SearchKind::External, SearchKind::Job];

/// How a hit matched the query; the order of the ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MatchRank {
    Exact,
    Prefix,
    Substring,
}

/// One thing found.
#[derive(Debug, Clone)]
pub struct SearchHit {
    pub kind: SearchKind,
    /// The id as the rest of the API takes it: a container's or field's id, an external asset's
    /// `ext:<source_type>:<fqn>`.
    pub id: String,
    pub container_id: Option<Id>,
    pub field_id: Option<Id>,
    /// `database.schema.name` (`.column` for a field), or the external asset's fqn.
    pub qualified_name: String,
    pub datastore_id: Option<Id>,
    pub datastore_name: Option<String>,
    /// The spelling that matched (`pg:shop.raw.orders`, `postgres://db:5432/shop.raw.orders`, ...).
    pub matched: String,
    pub rank: MatchRank,
}

/// `first` at most.
pub const MAX_FIRST: i64 = 100;

fn rank_of(needle: &str, candidate: &str) -> Option<MatchRank> {
    if candidate == needle {
        Some(MatchRank::Exact)
    } else if candidate.starts_with(needle) {
        Some(MatchRank::Prefix)
    } else if candidate.contains(needle) {
        Some(MatchRank::Substring)
    } else {
        None
    }
}

/// A part of the catalog to search, and how its hits are spelt.
struct Scope {
    /// What the store is asked for (lowercased).
    needle: String,
    datastores: Option<Vec<Id>>,
    /// Put before a hit's qualified name to show the spelling that matched.
    prefix: String,
}

/// The scopes a query names: the whole catalog, and each datastore or OpenLineage namespace it
/// starts with (the rest after one separator).
fn scopes(needle: &str, datastores: &[Datastore]) -> (Vec<Scope>, Vec<(String, String)>) {
    let mut out = vec![Scope { needle: needle.to_string(), datastores: None, prefix: String::new() }];
    let mut datasets = Vec::new();
    for d in datastores {
        let name = d.name.to_lowercase();
        for sep in [':', '.', '/'] {
            if let Some(rest) = needle.strip_prefix(&name).and_then(|r| r.strip_prefix(sep)) {
                if !rest.is_empty() {
                    out.push(Scope {
                        needle: rest.to_string(),
                        datastores: Some(vec![d.id]),
                        prefix: format!("{}{sep}", d.name),
                    });
                }
            }
        }
        for ns in &d.namespaces {
            for sep in ['/', ':'] {
                if let Some(rest) = needle.strip_prefix(&ns.to_lowercase()).and_then(|r| r.strip_prefix(sep)) {
                    if !rest.is_empty() {
                        out.push(Scope {
                            needle: rest.to_string(),
                            datastores: Some(vec![d.id]),
                            prefix: format!("{ns}{sep}"),
                        });
                        datasets.push((ns.clone(), rest.to_string()));
                    }
                }
            }
        }
    }
    (out, datasets)
}

impl Lineage {
    /// Up to `first` things whose names contain `query` (case-insensitive), of the `kinds` asked
    /// (all when `None`): exact matches first (a container's qualified name or its name alone, a
    /// field's `table.column` or qualified name, an fqn), then prefixes, then substrings; within a
    /// rank containers, fields, external assets and jobs, shorter names first.
    pub async fn search_by_name(
        &self,
        caller: &crate::auth::Caller,
        query: &str,
        kinds: Option<&[SearchKind]>,
        first: i64,
    ) -> Result<Vec<SearchHit>> {
        let query = query.trim();
        if query.is_empty() {
            return Err(Error::BadInput("query must not be empty: give a name such as shop.raw.orders".into()));
        }
        if query.chars().count() > 1024 {
            return Err(Error::BadInput("query is longer than 1024 characters".into()));
        }
        if !(1..=MAX_FIRST).contains(&first) {
            return Err(Error::BadInput(format!("first must be between 1 and {MAX_FIRST}, got {first}")));
        }
        let kinds = kinds.unwrap_or(&ALL_KINDS);
        let wants = |k: SearchKind| kinds.contains(&k);
        let needle = query.to_lowercase();
        let limit = first as usize;
        let datastores = self.store.list_datastores().await?;
        let ds_name: HashMap<Id, &str> = datastores.iter().map(|d| (d.id, d.name.as_str())).collect();
        let (scopes, datasets) = scopes(&needle, &datastores);
        let mut hits: HashMap<(SearchKind, String), SearchHit> = HashMap::new();
        let mut keep = |hit: SearchHit| {
            let key = (hit.kind, hit.id.clone());
            match hits.get(&key) {
                Some(h) if (h.rank, h.matched.len()) <= (hit.rank, hit.matched.len()) => {}
                _ => {
                    hits.insert(key, hit);
                }
            }
        };
        let container_hit = |c: &Container, rank: MatchRank, prefix: &str| {
            let q = container_key(c.database.as_deref(), c.schema.as_deref(), &c.name);
            SearchHit {
                kind: SearchKind::Container,
                id: c.id.to_string(),
                container_id: Some(c.id),
                field_id: None,
                matched: format!("{prefix}{q}"),
                qualified_name: q,
                datastore_id: Some(c.datastore_id),
                datastore_name: ds_name.get(&c.datastore_id).map(|s| s.to_string()),
                rank,
            }
        };
        for scope in &scopes {
            if wants(SearchKind::Container) {
                for c in self.store.search_containers(&scope.needle, scope.datastores.as_deref(), limit).await? {
                    let q = container_key(c.database.as_deref(), c.schema.as_deref(), &c.name).to_lowercase();
                    let ranks = [rank_of(&scope.needle, &c.name.to_lowercase()), rank_of(&scope.needle, &q)];
                    if let Some(rank) = ranks.into_iter().flatten().min() {
                        keep(container_hit(&c, rank, &scope.prefix));
                    }
                }
            }
            if wants(SearchKind::Field) {
                let fields = self.store.search_fields(&scope.needle, scope.datastores.as_deref(), limit).await?;
                let ids: Vec<Id> = fields.iter().map(|f| f.container_id).collect();
                let tables: HashMap<Id, Container> = match ids.is_empty() {
                    true => HashMap::new(),
                    false => self.store.containers_by_ids(&ids).await?.into_iter().map(|c| (c.id, c)).collect(),
                };
                for f in fields {
                    let Some(c) = tables.get(&f.container_id) else { continue };
                    let table = container_key(c.database.as_deref(), c.schema.as_deref(), &c.name);
                    let short = format!("{}.{}", c.name, f.name).to_lowercase();
                    let full = format!("{table}.{}", f.name);
                    let ranks = [rank_of(&scope.needle, &short), rank_of(&scope.needle, &full.to_lowercase())];
                    let Some(rank) = ranks.into_iter().flatten().min() else { continue };
                    keep(SearchHit {
                        kind: SearchKind::Field,
                        id: f.id.to_string(),
                        container_id: Some(c.id),
                        field_id: Some(f.id),
                        matched: format!("{}{full}", scope.prefix),
                        qualified_name: full,
                        datastore_id: Some(c.datastore_id),
                        datastore_name: ds_name.get(&c.datastore_id).map(|s| s.to_string()),
                        rank,
                    });
                }
            }
        }
        // An OpenLineage dataset named exactly, through the resolver's naming conventions.
        if wants(SearchKind::Container) || wants(SearchKind::External) {
            for (ns, name) in &datasets {
                match self.dataset_node(ns, name).await {
                    Ok(Some(Ok(c))) if wants(SearchKind::Container) => {
                        keep(container_hit(&c, MatchRank::Exact, &format!("{ns}/")));
                    }
                    _ => {}
                }
            }
        }
        if wants(SearchKind::External) {
            for (fqn, source_type) in self.store.search_externals(&needle, limit).await? {
                let Some(rank) = rank_of(&needle, &fqn.to_lowercase()) else { continue };
                keep(SearchHit {
                    kind: SearchKind::External,
                    id: external_node_id(&source_type, &fqn),
                    container_id: None,
                    field_id: None,
                    matched: fqn.clone(),
                    qualified_name: fqn,
                    datastore_id: None,
                    datastore_name: None,
                    rank,
                });
            }
        }
        if wants(SearchKind::Job) {
            // Jobs by `namespace/name` and by name; a job the caller sees only as a placeholder
            // is not found (its name would leak).
            let filter = crate::domain::JobFilter {
                name: Some(needle.rsplit('/').next().unwrap_or(&needle).to_string()),
                ..Default::default()
            };
            let page = crate::domain::PageRequest { page: 1, size: super::MAX_PAGE_SIZE };
            let jobs = self.store.list_jobs(&filter, page).await?.items;
            for view in self.job_views(caller, jobs).await? {
                if view.restricted {
                    continue;
                }
                let job = view.job;
                let qualified = format!("{}/{}", job.namespace, job.name);
                let rank = [rank_of(&needle, &qualified.to_lowercase()), rank_of(&needle, &job.name.to_lowercase())]
                    .into_iter()
                    .flatten()
                    .min();
                let Some(rank) = rank else { continue };
                keep(SearchHit {
                    kind: SearchKind::Job,
                    id: job.id.to_string(),
                    container_id: None,
                    field_id: None,
                    matched: qualified.clone(),
                    qualified_name: qualified,
                    datastore_id: None,
                    datastore_name: None,
                    rank,
                });
            }
        }
        let mut out: Vec<SearchHit> = hits.into_values().collect();
        let order = |h: &SearchHit| {
            (h.rank, h.kind, h.qualified_name.len(), h.qualified_name.clone(), h.container_id, h.field_id, h.id.clone())
        };
        out.sort_by_cached_key(order);
        out.truncate(limit);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_scopes() {
        assert_eq!(rank_of("shop.raw.orders", "shop.raw.orders"), Some(MatchRank::Exact));
        assert_eq!(rank_of("shop.raw", "shop.raw.orders"), Some(MatchRank::Prefix));
        assert_eq!(rank_of("orders", "shop.raw.orders"), Some(MatchRank::Substring));
        assert_eq!(rank_of("x", "shop"), None);
        let ds = Datastore {
            id: 3,
            name: "Warehouse".into(),
            kind: "postgresql".into(),
            store_type: None,
            namespaces: vec!["postgres://db:5432".into()],
            enrichment_only: false,
        };
        let (s, datasets) = scopes("warehouse:shop.raw.orders", std::slice::from_ref(&ds));
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[1].needle.as_str(), s[1].datastores.clone(), s[1].prefix.as_str()),
            ("shop.raw.orders", Some(vec![3]), "Warehouse:")
        );
        assert!(datasets.is_empty());
        let (s, datasets) = scopes("postgres://db:5432/shop.raw.orders", &[ds]);
        assert_eq!(s.last().map(|x| x.needle.as_str()), Some("shop.raw.orders"));
        assert_eq!(datasets, vec![("postgres://db:5432".to_string(), "shop.raw.orders".to_string())]);
    }
}
