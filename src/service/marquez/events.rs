//! Marquez's search and its stored events.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::*;

impl Lineage {
    /// Datasets and visible jobs whose name matches `q` (see `like`), by name, with the total.
    pub async fn marquez_search(
        &self,
        caller: &Caller,
        q: &str,
        filter: Option<SearchFilter>,
        limit: usize,
    ) -> Result<(Vec<SearchHit>, usize)> {
        let scan = self.scan(caller).await?;
        let mut hits: BTreeMap<(String, bool, String), SearchHit> = BTreeMap::new();
        let mut put = |hit: SearchHit| {
            let key = (hit.id.name.to_lowercase(), hit.is_job, hit.id.namespace.clone());
            let slot = hits.entry(key).or_insert_with(|| hit.clone());
            if hit.updated_at > slot.updated_at {
                slot.updated_at = hit.updated_at;
            }
        };
        if filter != Some(SearchFilter::Dataset) {
            for j in scan.jobs.iter().filter(|j| scan.visible.contains(&j.id) && like(q, &j.name)) {
                put(SearchHit {
                    is_job: true,
                    id: DatasetId { namespace: j.namespace.clone(), name: j.name.clone() },
                    updated_at: Some(j.last_seen_at),
                });
            }
        }
        if filter != Some(SearchFilter::Job) {
            // Datasets events named, then catalogued containers whose name holds the query's
            // last literal part (the store's name index), matched on their full name.
            let mut named: HashSet<Id> = HashSet::new();
            for (_, e) in &scan.io {
                if let Some(c) = e.end.container_id() {
                    named.insert(c);
                }
                if like(q, &e.name) {
                    put(SearchHit {
                        is_job: false,
                        id: DatasetId { namespace: e.namespace.clone(), name: e.name.clone() },
                        updated_at: Some(e.at),
                    });
                }
            }
            let literal = q.split(['%', '_', '.', '/']).rfind(|s| !s.trim().is_empty()).unwrap_or("");
            if !literal.is_empty() {
                let datastores = self.datastore_map().await?;
                let p = self
                    .store
                    .list_containers(None, Some(literal), PageRequest { page: 1, size: MAX_PAGE_SIZE })
                    .await?;
                let unnamed: Vec<Container> = p.items.into_iter().filter(|c| !named.contains(&c.id)).collect();
                for (id, _, updated, _) in self.container_names(&unnamed, &datastores).await?.into_values() {
                    if like(q, &id.name) {
                        put(SearchHit { is_job: false, id, updated_at: updated });
                    }
                }
            }
        }
        let total = hits.len();
        Ok((hits.into_values().take(limit).collect(), total))
    }

    /// Marquez's `/events/lineage`: the stored run events whose `eventTime` is in
    /// `[after, before)`, by `eventTime` newest first (oldest first with `ascending`), paged by
    /// offset, with the count of all events in the window (see `Store::events_by_event_time`).
    /// The events of jobs the caller may not see are left out of the page.
    pub async fn marquez_events(
        &self,
        caller: &Caller,
        window: &crate::domain::EventTimeWindow,
    ) -> Result<(Vec<StoredEvent>, i64)> {
        // Neo4j adds SKIP and LIMIT: an offset near i64::MAX would overflow there (every offset
        // past the events is the same empty page).
        let window = crate::domain::EventTimeWindow { offset: window.offset.min(i64::MAX / 4), ..window.clone() };
        let (mut events, total) = self.store.events_by_event_time(&window).await?;
        if !caller.unrestricted_admin {
            let mut seen: HashMap<(String, String), bool> = HashMap::new();
            let mut kept = Vec::new();
            for e in events {
                let (Some(ns), Some(name)) = (e.job_namespace.clone(), e.job_name.clone()) else {
                    kept.push(e);
                    continue;
                };
                let visible = match seen.get(&(ns.clone(), name.clone())) {
                    Some(v) => *v,
                    None => {
                        let v = match self.store.job_by_name(&ns, &name).await? {
                            Some(job) => !self.job_views(caller, vec![job]).await?.remove(0).restricted,
                            None => true,
                        };
                        seen.insert((ns, name), v);
                        v
                    }
                };
                if visible {
                    kept.push(e);
                }
            }
            events = kept;
        }
        Ok((events, total))
    }
}
