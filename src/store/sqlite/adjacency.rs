//! The edges around the containers and fields traversals read, kept decoded in memory between
//! reads: a traversal level is a lookup per id instead of an index seek per id, a row fetch and
//! a decode per edge (on the hub's `impact` those were most of the service's time). A node's
//! list holds its retired edges too, so a level as of an instant is picked from the same lists
//! as today's (`Edge::live_at` instead of `retired_at IS NULL`), and costs what it costs.
//!
//! Nothing here can serve an edge a committed write has changed. Every lookup first asks its
//! reader connection `PRAGMA data_version`, which moves when any other connection (this
//! process's writer, or another process on the same file, as `tributary import` beside `serve`)
//! has committed since that connection last asked; the first connection to see a move empties
//! the lists and starts a new epoch. Lists read from SQLite are kept only if the epoch they were
//! read in is still current, so a list read before a commit and stored after it never outlives
//! the next lookup. Reads inside a session (the writer's open transaction) do not come here.
//!
//! Bounded: past [`BUDGET`] bytes (estimated per edge, [`weight`]) the lists are emptied and
//! fill again from what is read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::Connection;

use crate::domain::{Direction, Edge, End, Id};

/// Bytes of edges kept at most: a large store's hub `impact` (14,000 edges) several times over,
/// a few percent of what a store of that size maps.
const BUDGET: usize = 64 << 20;

/// About what an edge kept costs: the record, its strings and its transformations' JSON, plus
/// the allocator's rounding.
fn weight(e: &Edge) -> usize {
    let text = |s: &Option<String>| s.as_ref().map_or(0, |s| s.len() + 16);
    let fqn = |end: &End| match end {
        End::External { fqn } => fqn.len() + 16,
        _ => 0,
    };
    let json = e.transformations.as_ref().map_or(0, json_weight);
    std::mem::size_of::<Edge>()
        + e.source_type.len()
        + 16
        + text(&e.description)
        + text(&e.operation)
        + fqn(&e.source)
        + fqn(&e.target)
        + e.intervals.len() * std::mem::size_of::<crate::domain::Interval>()
        + 16
        + json
}

/// Which edges a list holds: container or field edges, into (`Upstream`) or out of
/// (`Downstream`) its node.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lists {
    fields: bool,
    direction: Direction,
}

impl Lists {
    pub(super) fn containers(direction: Direction) -> Self {
        Lists { fields: false, direction }
    }

    pub(super) fn fields(direction: Direction) -> Self {
        Lists { fields: true, direction }
    }

    pub(super) fn over_fields(self) -> bool {
        self.fields
    }

    pub(super) fn direction(self) -> Direction {
        self.direction
    }

    fn index(self) -> usize {
        usize::from(self.fields) * 2 + usize::from(self.direction == Direction::Downstream)
    }

    /// The node whose list an edge read for it belongs to.
    fn near(self, e: &Edge) -> Option<Id> {
        match (self.direction, &e.source, &e.target) {
            (Direction::Downstream, End::Container { id } | End::Field { id, .. }, _) => Some(*id),
            (Direction::Upstream, _, End::Container { id } | End::Field { id, .. }) => Some(*id),
            _ => None,
        }
    }
}

/// A JSON value's heap, roughly: each node's slot, strings and keys (walked, not serialised:
/// this runs for every edge a level reads from SQLite).
fn json_weight(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    32 + match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(json_weight).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + 32 + json_weight(v)).sum(),
        _ => 0,
    }
}

#[derive(Default)]
pub(super) struct Adjacency {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    epoch: u64,
    /// Each reader connection's `data_version` when it last asked, by the connection's address
    /// (the readers live in one vector for the store's life).
    versions: HashMap<usize, i64>,
    lists: [HashMap<Id, Arc<[Edge]>>; 4],
    /// The kept edges' [`weight`].
    bytes: usize,
}

impl Inner {
    fn clear(&mut self) {
        self.lists.iter_mut().for_each(HashMap::clear);
        self.bytes = 0;
    }
}

impl Adjacency {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing is left half-done under the lock: a panic elsewhere does not poison the lists.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The edges of `ids` in `lists` that `pick` keeps, ordered by id as a level's statement
    /// returns them: kept lists as they are, the others read whole through `read` on `c` (a
    /// reader) and kept.
    pub(super) fn edges(
        &self,
        c: &Connection,
        lists: Lists,
        ids: &[Id],
        read: impl Fn(&Connection, &[Id]) -> rusqlite::Result<Vec<Edge>>,
        pick: impl Fn(&Edge) -> bool,
    ) -> rusqlite::Result<Vec<Edge>> {
        let version: i64 = c.prepare_cached("PRAGMA data_version")?.query_row([], |r| r.get(0))?;
        let (epoch, kept, missing) = {
            let mut inner = self.lock();
            if inner.versions.insert(std::ptr::from_ref(c) as usize, version) != Some(version) {
                inner.clear();
                inner.epoch += 1;
            }
            let list = &inner.lists[lists.index()];
            let (mut kept, mut missing) = (Vec::new(), Vec::new());
            for &id in ids {
                match list.get(&id) {
                    Some(edges) => kept.push(edges.clone()),
                    None => missing.push(id),
                }
            }
            (inner.epoch, kept, missing)
        };
        let mut out: Vec<Edge> = Vec::with_capacity(kept.iter().map(|l| l.len()).sum());
        for list in &kept {
            out.extend(list.iter().filter(|e| pick(e)).cloned());
        }
        if !missing.is_empty() {
            let read = read(c, &missing)?;
            let mut by_node: HashMap<Id, Vec<Edge>> = missing.iter().map(|&id| (id, Vec::new())).collect();
            for e in &read {
                if let Some(list) = lists.near(e).and_then(|id| by_node.get_mut(&id)) {
                    list.push(e.clone());
                }
            }
            out.extend(read.into_iter().filter(|e| pick(e)));
            self.keep(epoch, lists, by_node);
        }
        out.sort_unstable_by_key(|e| e.id);
        Ok(out)
    }

    /// Keeps lists read in `epoch`, unless a commit has been seen since.
    fn keep(&self, epoch: u64, lists: Lists, by_node: HashMap<Id, Vec<Edge>>) {
        // Weighed before the lock: the other half of a split read may be waiting for it.
        let added: usize = by_node.values().flatten().map(weight).sum::<usize>() + by_node.len() * 64;
        if added > BUDGET {
            return;
        }
        let mut inner = self.lock();
        if inner.epoch != epoch {
            return;
        }
        if inner.bytes + added > BUDGET {
            inner.clear();
        }
        inner.bytes += added;
        let list = &mut inner.lists[lists.index()];
        for (id, edges) in by_node {
            list.insert(id, edges.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_list_has_its_own_slot_and_near_end() {
        let slots: Vec<usize> = [
            Lists::containers(Direction::Upstream),
            Lists::containers(Direction::Downstream),
            Lists::fields(Direction::Upstream),
            Lists::fields(Direction::Downstream),
        ]
        .iter()
        .map(|l| l.index())
        .collect();
        assert_eq!(slots, vec![0, 1, 2, 3]);
        let e = Edge {
            id: 1,
            created: Default::default(),
            source: End::Field { id: 7, container_id: 1 },
            target: End::Field { id: 9, container_id: 2 },
            description: None,
            source_type: "manual".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: None,
            retired_at: None,
            intervals: Vec::new(),
        };
        assert_eq!(Lists::fields(Direction::Downstream).near(&e), Some(7));
        assert_eq!(Lists::fields(Direction::Upstream).near(&e), Some(9));
        let x = Edge { target: End::External { fqn: "s3://b/k".into() }, ..e.clone() };
        assert_eq!(Lists::fields(Direction::Upstream).near(&x), None);
        // What an edge holds beyond its record counts towards the budget.
        let t =
            Edge { transformations: Some(serde_json::json!([{"type": "DIRECT", "subtype": "IDENTITY"}])), ..e.clone() };
        assert!(weight(&e) > std::mem::size_of::<Edge>());
        assert!(weight(&x) > weight(&e) && weight(&t) > weight(&e) + 100);
    }
}
