//! A Neo4j session's assertion buffer: `apply_assertions` in a session folds each batch into
//! the edges and evidence the session has met, in memory, and writes them once for the session
//! (issue #44, item 1, the write side): at its commit, or before any statement of the session
//! that reads or writes edges or evidence otherwise (`Session::exec` for a `Cmd` that names
//! `LINEAGE` or `Evidence`, every `write_txn!` in it, the jobs' and the deferred writes).
//!
//! A chunk of OpenLineage events reads ahead first (`read_ahead`, one `overlay_read_ahead`): every
//! edge between the container pairs its runs may connect (their fields included) and the edges
//! its jobs' evidence is on; the buffer then counts those pairs covered (a key between them it
//! does not hold, no edge holds), so the chunk's events usually read nothing more.
//!
//! Per batch it reads, in one statement (`overlay_lookup`), only what it has not met yet: the
//! edges of the batch's keys and of the ids it retires evidence of or may retire, each with all
//! its evidence rows, write-locked as `assert_edges_lookup` locks them; the buffer then knows
//! each of those edges whole, and what it holds stays true until the session ends (the locks) or
//! another write of edges runs in it (the buffer is written and forgotten first). The fold is
//! `apply_assertions_in`'s rules, in the same order, on these copies: the same summary, the same
//! change-log entries in the same order, the same rows. The writes are one statement per kind
//! for the whole session: the new edges with their evidence, the stored edges changed, their
//! evidence changed. A job's prior lineage read in the session (`live_evidence_of_key`) is the
//! stored rows with the buffer's over them (`patch_prior`), so no write waits for it.
//!
//! A write that fails here fails the session, as any failed statement does; the service then
//! applies the chunk again event by event without one (`Store::session_conflicts`).

use std::collections::{BTreeSet, HashMap, HashSet};

use neo4rs::{BoltType, Txn};

use super::assertions::{assert_again, new_edge};
use super::edges::ensure_ends_exist;
use super::rows::{
    edge_row, edge_ukey, evidence_row, intervals_text, json_text, list, map, micros, opt_ts, Decode, EdgeProps,
    EvidenceProps,
};
use super::{count, exec, internal, Cmd};
use crate::domain::{AssertionBatch, AssertionSummary, ChangeKind, Edge, End, Evidence, Id, NewChange, Timestamp};
use crate::store::{PriorEvidence, StoreResult};

/// An edge as the session left it, with every evidence row it has.
struct Known {
    edge: Edge,
    evidence: Vec<Evidence>,
    /// Created in the session (not stored yet).
    new: bool,
    /// Stored, and changed in the session.
    dirty: bool,
}

#[derive(Default)]
pub(super) struct AssertionBuffer {
    edges: HashMap<Id, Known>,
    by_ukey: HashMap<String, Id>,
    /// Looked up and not stored: no edge holds the key (yet).
    absent: BTreeSet<String>,
    /// The new edges in creation order, and the stored edges changed in the order first changed.
    created: Vec<Id>,
    changed: Vec<Id>,
    /// Evidence rows of stored edges changed in the session.
    evidence_changed: BTreeSet<(Id, String)>,
    /// (source, target) containers every edge between which (their fields included) the buffer
    /// met (`read_ahead`): a key between them that it does not hold, no edge holds.
    covered: HashSet<(Id, Id)>,
}

impl AssertionBuffer {
    /// Whether nothing waits to be written.
    pub(super) fn is_clean(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.evidence_changed.is_empty()
    }

    /// Forgets what the session met (after a write of edges the buffer does not see).
    pub(super) fn forget(&mut self) {
        *self = AssertionBuffer::default();
    }

    fn insert(&mut self, edge: Edge, evidence: Vec<Evidence>, new: bool) {
        let ukey = edge_ukey(&edge.source, &edge.target, &edge.source_type);
        self.absent.remove(&ukey);
        self.by_ukey.insert(ukey, edge.id);
        self.edges.insert(edge.id, Known { edge, evidence, new, dirty: false });
    }

    fn mark_changed(&mut self, id: Id) {
        if let Some(k) = self.edges.get_mut(&id) {
            if !k.new && !k.dirty {
                k.dirty = true;
                self.changed.push(id);
            }
        }
    }

    /// Whether every edge between the two ends was read ahead (`covered`).
    fn covers(&self, source: &End, target: &End) -> bool {
        let container = |e: &End| match e {
            End::Container { id } | End::Field { container_id: id, .. } => Some(*id),
            End::External { .. } => None,
        };
        container(source).zip(container(target)).is_some_and(|pair| self.covered.contains(&pair))
    }

    /// Reads (and locks) at once what a chunk's batches will need (issue #44, item 1): every
    /// edge from a pair's source container (or its fields) to its target container (or its
    /// fields) and the edges `ids`, each with all its evidence; `look_up` then reads only what
    /// lies outside them. The pairs stay covered until the buffer is forgotten.
    pub(super) async fn read_ahead(&mut self, txn: &mut Txn, pairs: &[(Id, Id)], ids: &[Id]) -> StoreResult<()> {
        let pairs: BTreeSet<(Id, Id)> = pairs.iter().copied().filter(|p| !self.covered.contains(p)).collect();
        let ids: BTreeSet<Id> = ids.iter().copied().filter(|id| !self.edges.contains_key(id)).collect();
        if pairs.is_empty() && ids.is_empty() {
            return Ok(());
        }
        let rows = exec(
            txn,
            cypher!("overlay_read_ahead")
                .param("pairs", pairs.iter().map(|(s, t)| vec![*s, *t]).collect::<Vec<_>>())
                .param("ids", ids.into_iter().collect::<Vec<_>>()),
        )
        .await?;
        self.take_rows(&rows)?;
        self.covered.extend(pairs);
        Ok(())
    }

    /// The edges with their evidence a lookup returned, but those the buffer holds already.
    fn take_rows(&mut self, rows: &super::Rows) -> StoreResult<()> {
        let edges = rows.decode::<EdgeProps>("edge")?;
        let evidence = rows.column::<Vec<EvidenceProps>>("evidence")?;
        for (edge, evidence) in edges.into_iter().zip(evidence) {
            if self.edges.contains_key(&edge.id) {
                continue;
            }
            let evidence = evidence.into_iter().map(Decode::decode).collect::<StoreResult<Vec<_>>>()?;
            self.insert(edge, evidence, false);
        }
        Ok(())
    }

    /// Reads (and locks) what the batch needs that the session has not met.
    async fn look_up(&mut self, txn: &mut Txn, batch: &AssertionBatch) -> StoreResult<()> {
        let ukeys: BTreeSet<String> = batch
            .assert
            .iter()
            .filter(|a| !self.covers(&a.edge.source, &a.edge.target))
            .map(|a| edge_ukey(&a.edge.source, &a.edge.target, &a.edge.source_type))
            .filter(|k| !self.by_ukey.contains_key(k) && !self.absent.contains(k))
            .collect();
        let ids: BTreeSet<Id> = batch
            .retire_evidence
            .iter()
            .map(|(id, _)| *id)
            .chain(batch.retire_candidates.iter().copied())
            .filter(|id| !self.edges.contains_key(id))
            .collect();
        if ukeys.is_empty() && ids.is_empty() {
            return Ok(());
        }
        let rows = exec(
            txn,
            cmd_lookup()
                .param("ukeys", ukeys.iter().cloned().collect::<Vec<_>>())
                .param("ids", ids.into_iter().collect::<Vec<_>>()),
        )
        .await?;
        self.take_rows(&rows)?;
        for k in ukeys {
            if !self.by_ukey.contains_key(&k) {
                self.absent.insert(k);
            }
        }
        Ok(())
    }

    /// Applies a batch: reads what it needs that the session has not met (`look_up`), reserves
    /// ids for its new edges (`new_ids`, the first of as many consecutive ids as asked), then
    /// `fold`s it. Its change-log entries go to `changes`.
    pub(super) async fn apply(
        &mut self,
        txn: &mut Txn,
        batch: &AssertionBatch,
        now: Timestamp,
        new_ids: impl AsyncFnOnce(usize) -> StoreResult<Id>,
        changes: &mut Vec<NewChange>,
    ) -> StoreResult<(AssertionSummary, Vec<Id>)> {
        self.look_up(txn, batch).await?;
        let first = match self.new_edges_of(batch) {
            0 => 0,
            n => new_ids(n).await?,
        };
        self.fold(batch, now, first, changes)
    }

    /// How many edges the batch creates: its distinct keys no edge the buffer met holds.
    fn new_edges_of(&self, batch: &AssertionBatch) -> usize {
        let keys: BTreeSet<String> =
            batch.assert.iter().map(|a| edge_ukey(&a.edge.source, &a.edge.target, &a.edge.source_type)).collect();
        keys.iter().filter(|k| !self.by_ukey.contains_key(*k)).count()
    }

    /// Folds a batch into the buffer by `apply_assertions_in`'s rules, in memory (the buffer
    /// knows every edge the batch names, `look_up`): its summary, and its change-log entries in
    /// `changes` in the order `apply_assertions_in` records them, and each assertion's edge id in
    /// batch order. New edges take ids `first`, `first + 1`, ... in creation order.
    fn fold(
        &mut self,
        batch: &AssertionBatch,
        now: Timestamp,
        first: Id,
        changes: &mut Vec<NewChange>,
    ) -> StoreResult<(AssertionSummary, Vec<Id>)> {
        let now = micros(now);
        let mut summary =
            AssertionSummary { edges_asserted: count(batch.assert.len())?, ..AssertionSummary::default() };
        let mut next = first;

        // ---- 1. edges: create or assert again, in batch order ----
        let ukeys: Vec<String> =
            batch.assert.iter().map(|a| edge_ukey(&a.edge.source, &a.edge.target, &a.edge.source_type)).collect();
        let mut edge_of_assertion = Vec::with_capacity(batch.assert.len());
        for (assertion, ukey) in batch.assert.iter().zip(&ukeys) {
            let id = match self.by_ukey.get(ukey) {
                Some(&id) => {
                    let Some(known) = self.edges.get_mut(&id) else {
                        return Err(internal("overlay", format!("edge {id} left the session's buffer")));
                    };
                    assert_again(&mut known.edge, &assertion.edge, now, &mut summary, changes);
                    self.mark_changed(id);
                    id
                }
                None => {
                    summary.edges_created += 1;
                    let mut edge = new_edge(&assertion.edge, now);
                    edge.id = next;
                    next += 1;
                    changes.push(NewChange::edge(ChangeKind::EdgeAsserted, &edge, now));
                    let id = edge.id;
                    self.insert(edge, Vec::new(), true);
                    self.created.push(id);
                    id
                }
            };
            edge_of_assertion.push(id);
        }

        // ---- 2. evidence of the assertions, live; one row per (edge, key), the last one wins ----
        // A row's first observing operation stays; its last one is kept when the row names none.
        let mut asserted_now: BTreeSet<(Id, String)> = BTreeSet::new();
        for (assertion, &id) in batch.assert.iter().zip(&edge_of_assertion) {
            let Some(known) = self.edges.get_mut(&id) else { continue };
            let mut row = Evidence { edge_id: id, retired_at: None, ..assertion.evidence.clone() };
            match known.evidence.iter_mut().find(|e| e.key == row.key) {
                Some(old) => {
                    // Counted once per (edge, key) of the batch, as the statement counts its rows.
                    if asserted_now.insert((id, row.key.clone())) && old.retired_at.is_some() {
                        summary.evidence_created += 1;
                    }
                    row.first_observed_operation_id =
                        old.first_observed_operation_id.or(row.first_observed_operation_id);
                    row.last_observed_operation_id = row.last_observed_operation_id.or(old.last_observed_operation_id);
                    *old = row;
                }
                None => {
                    asserted_now.insert((id, row.key.clone()));
                    summary.evidence_created += 1;
                    known.evidence.push(row);
                }
            }
            if !known.new {
                self.evidence_changed.insert((id, assertion.evidence.key.clone()));
            }
        }

        // ---- 3. evidence that no longer asserts its edge ----
        let retire: BTreeSet<(Id, &str)> = batch.retire_evidence.iter().map(|(id, key)| (*id, key.as_str())).collect();
        for (id, key) in retire {
            let Some(known) = self.edges.get_mut(&id) else { continue };
            if let Some(e) = known.evidence.iter_mut().find(|e| e.key == key && e.retired_at.is_none()) {
                e.retired_at = Some(now);
                summary.evidence_retired += 1;
                if !known.new {
                    self.evidence_changed.insert((id, key.to_string()));
                }
            }
        }

        // ---- 4. candidates left without live evidence retire; their last interval closes ----
        let candidates: BTreeSet<Id> = batch.retire_candidates.iter().copied().collect();
        for id in candidates {
            let Some(known) = self.edges.get_mut(&id) else { continue };
            if known.edge.retired_at.is_some() || known.evidence.iter().any(|e| e.retired_at.is_none()) {
                continue;
            }
            changes.push(NewChange::edge(ChangeKind::EdgeRetired, &known.edge, now));
            known.edge.retired_at = Some(now);
            if let Some(last) = known.edge.intervals.last_mut().filter(|last| last.to.is_none()) {
                last.to = Some(now);
            }
            summary.edges_retired += 1;
            self.mark_changed(id);
        }
        Ok((summary, edge_of_assertion))
    }

    /// A job's live evidence as the session sees it: the stored rows (`stored`, read without
    /// the buffer's writes) of the edges the buffer has not met, and the buffer's for those it has.
    pub(super) fn patch_prior(&self, key: &str, stored: Vec<PriorEvidence>) -> Vec<PriorEvidence> {
        let mut out: Vec<PriorEvidence> = stored.into_iter().filter(|p| !self.edges.contains_key(&p.edge_id)).collect();
        for known in self.edges.values() {
            for e in known.evidence.iter().filter(|e| e.key == key && e.retired_at.is_none()) {
                out.push(PriorEvidence::of(e, Some(&known.edge)));
            }
        }
        out.sort_by_key(|p| p.edge_id);
        out
    }

    /// Writes what waits, one statement per kind; the buffer keeps what it knows, all of it now
    /// stored.
    pub(super) async fn flush(&mut self, txn: &mut Txn) -> StoreResult<()> {
        if self.is_clean() {
            return Ok(());
        }
        let created = std::mem::take(&mut self.created);
        if !created.is_empty() {
            let known: Vec<&Known> = created.iter().filter_map(|id| self.edges.get(id)).collect();
            let rows = known.iter().map(|k| edge_row(&k.edge)).collect::<StoreResult<Vec<_>>>()?;
            let evidence = known
                .iter()
                .map(|k| k.evidence.iter().map(evidence_row).collect::<StoreResult<Vec<_>>>().map(list))
                .collect::<StoreResult<Vec<_>>>()?;
            let out = exec(txn, cmd_create().param("rows", list(rows)).param("evidence", list(evidence))).await?;
            let ids: Vec<Id> = out.column("id")?;
            if ids.len() != known.len() {
                // An end is missing (deleted meanwhile): name it; the session fails either way.
                ensure_ends_exist(txn, known.iter().flat_map(|k| [&k.edge.source, &k.edge.target])).await?;
                return Err(internal(
                    "overlay_edges_create",
                    format!("created {} of {} edges: an end node is missing", ids.len(), known.len()),
                ));
            }
        }
        for id in &created {
            if let Some(k) = self.edges.get_mut(id) {
                k.new = false;
            }
        }
        let changed = std::mem::take(&mut self.changed);
        if !changed.is_empty() {
            let rows = changed
                .iter()
                .filter_map(|id| self.edges.get(id))
                .map(|k| changed_row(&k.edge))
                .collect::<StoreResult<Vec<_>>>()?;
            exec(txn, cmd_update().param("rows", list(rows))).await?;
            for id in &changed {
                if let Some(k) = self.edges.get_mut(id) {
                    k.dirty = false;
                }
            }
        }
        let evidence = std::mem::take(&mut self.evidence_changed);
        if !evidence.is_empty() {
            let rows = evidence
                .iter()
                .filter_map(|(id, key)| self.edges.get(id)?.evidence.iter().find(|e| &e.key == key))
                .map(evidence_row)
                .collect::<StoreResult<Vec<_>>>()?;
            exec(txn, cmd_evidence().param("rows", list(rows))).await?;
        }
        Ok(())
    }
}

/// The row of `overlay_edges_update` for a stored edge the session changed.
fn changed_row(e: &Edge) -> StoreResult<BoltType> {
    Ok(map([
        ("id", e.id.into()),
        ("retired_at", opt_ts(e.retired_at.as_ref())),
        ("intervals", intervals_text(&e.intervals)?.into()),
        ("last_asserted_at", opt_ts(e.last_asserted_at.as_ref())),
        ("operation", e.operation.clone().into()),
        ("derived", e.derived.into()),
        ("transformations", json_text(e.transformations.as_ref())?),
    ]))
}

fn cmd_lookup() -> Cmd {
    cypher!("overlay_lookup")
}

fn cmd_create() -> Cmd {
    cypher!("overlay_edges_create")
}

fn cmd_update() -> Cmd {
    cypher!("overlay_edges_update")
}

fn cmd_evidence() -> Cmd {
    cypher!("overlay_evidence_put")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Assertion, End, Interval, NewEdge};

    fn at(minute: u32) -> Timestamp {
        chrono::DateTime::parse_from_rfc3339(&format!("2026-12-06T10:{minute:02}:00Z"))
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    fn assertion(source: Id, target: Id, key: &str, op: Option<i64>) -> Assertion {
        Assertion {
            edge: NewEdge {
                source: End::Container { id: source },
                target: End::Container { id: target },
                description: None,
                source_type: "openlineage".into(),
                operation: None,
                derived: None,
                transformations: None,
                last_asserted_at: None,
            },
            evidence: Evidence {
                edge_id: 0,
                key: key.into(),
                provider: "openlineage".into(),
                evidence_type: "run_event".into(),
                authorship: "producer".into(),
                source_relation: None,
                observed_at: None,
                first_observed_operation_id: op,
                last_observed_operation_id: op,
                details: None,
                retired_at: None,
            },
        }
    }

    fn stored(id: Id, source: Id, target: Id, retired: Option<Timestamp>) -> Edge {
        Edge {
            id,
            created: at(0),
            source: End::Container { id: source },
            target: End::Container { id: target },
            description: None,
            source_type: "openlineage".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: None,
            retired_at: retired,
            intervals: vec![Interval { from: at(0), to: retired }],
        }
    }

    fn kinds(changes: &[NewChange]) -> Vec<(ChangeKind, Option<Id>)> {
        changes.iter().map(|c| (c.kind, c.edge_id)).collect()
    }

    #[test]
    fn an_edge_asserted_twice_in_a_batch_is_created_once_with_one_evidence_row() {
        let mut buf = AssertionBuffer::default();
        let batch = AssertionBatch {
            assert: vec![assertion(1, 2, "job-a", Some(7)), assertion(1, 2, "job-a", None)],
            ..AssertionBatch::default()
        };
        assert_eq!(buf.new_edges_of(&batch), 1);
        let mut changes = Vec::new();
        let (s, ids) = buf.fold(&batch, at(1), 100, &mut changes).unwrap();
        assert_eq!(ids, vec![100, 100]);
        assert_eq!((s.edges_created, s.edges_asserted, s.evidence_created), (1, 2, 1));
        assert_eq!(kinds(&changes), vec![(ChangeKind::EdgeAsserted, Some(100))]);
        let known = &buf.edges[&100];
        assert!(known.new);
        // The second row named no operation: the first one's stays as the last observer too.
        assert_eq!(known.evidence.len(), 1);
        assert_eq!(known.evidence[0].last_observed_operation_id, Some(7));
        assert_eq!(buf.created, vec![100]);
        assert!(buf.changed.is_empty() && buf.evidence_changed.is_empty());
    }

    #[test]
    fn a_retired_edge_asserted_again_is_revived_and_its_retired_evidence_counts_as_created() {
        let mut buf = AssertionBuffer::default();
        let mut old = assertion(1, 2, "job-a", Some(3)).evidence;
        old.edge_id = 5;
        old.retired_at = Some(at(0));
        buf.insert(stored(5, 1, 2, Some(at(0))), vec![old], false);
        let batch = AssertionBatch { assert: vec![assertion(1, 2, "job-a", Some(9))], ..AssertionBatch::default() };
        assert_eq!(buf.new_edges_of(&batch), 0);
        let mut changes = Vec::new();
        let (s, ids) = buf.fold(&batch, at(2), 0, &mut changes).unwrap();
        assert_eq!(ids, vec![5]);
        assert_eq!((s.edges_created, s.edges_revived, s.evidence_created), (0, 1, 1));
        assert_eq!(kinds(&changes), vec![(ChangeKind::EdgeRevived, Some(5))]);
        let known = &buf.edges[&5];
        assert_eq!(known.edge.retired_at, None);
        assert_eq!(
            known.edge.intervals,
            vec![Interval { from: at(0), to: Some(at(0)) }, Interval { from: at(2), to: None }]
        );
        // The operation that first observed the row stays; the last one moves.
        assert_eq!(known.evidence[0].first_observed_operation_id, Some(3));
        assert_eq!(known.evidence[0].last_observed_operation_id, Some(9));
        assert_eq!(buf.changed, vec![5]);
        assert!(buf.evidence_changed.contains(&(5, "job-a".to_string())));
    }

    #[test]
    fn a_candidate_retires_only_when_no_other_job_still_backs_it() {
        let mut buf = AssertionBuffer::default();
        let row = |edge_id: Id, key: &str| Evidence { edge_id, ..assertion(1, 2, key, None).evidence };
        buf.insert(stored(5, 1, 2, None), vec![row(5, "job-a")], false);
        buf.insert(stored(6, 1, 3, None), vec![row(6, "job-a"), row(6, "job-b")], false);
        let batch = AssertionBatch {
            retire_evidence: vec![(5, "job-a".into()), (6, "job-a".into())],
            retire_candidates: vec![6, 5],
            ..AssertionBatch::default()
        };
        let mut changes = Vec::new();
        let (s, _) = buf.fold(&batch, at(3), 0, &mut changes).unwrap();
        assert_eq!((s.evidence_retired, s.edges_retired), (2, 1));
        // Recorded as the edge was before it retired.
        assert_eq!(kinds(&changes), vec![(ChangeKind::EdgeRetired, Some(5))]);
        assert_eq!(buf.edges[&5].edge.retired_at, Some(at(3)));
        assert_eq!(buf.edges[&5].edge.intervals.last().and_then(|i| i.to), Some(at(3)));
        assert_eq!(buf.edges[&6].edge.retired_at, None);
        assert_eq!(buf.changed, vec![5]);
    }

    #[test]
    fn a_later_batch_sees_what_an_earlier_one_left_and_the_prior_lineage_shows_it() {
        let mut buf = AssertionBuffer::default();
        let mut changes = Vec::new();
        let start = AssertionBatch { assert: vec![assertion(1, 2, "job-a", None)], ..AssertionBatch::default() };
        buf.fold(&start, at(1), 40, &mut changes).unwrap();
        let prior = buf.patch_prior("job-a", Vec::new());
        assert_eq!(prior.iter().map(|p| p.edge_id).collect::<Vec<_>>(), vec![40]);
        // The stored rows of an edge the buffer met are the buffer's.
        let stale = PriorEvidence { edge_id: 40, key: "job-a".into(), run_id: None, first_run_id: None, ends: None };
        assert_eq!(buf.patch_prior("job-a", vec![stale]).len(), 1);
        let complete = AssertionBatch {
            retire_evidence: vec![(40, "job-a".into())],
            retire_candidates: vec![40],
            ..AssertionBatch::default()
        };
        let (s, _) = buf.fold(&complete, at(2), 0, &mut changes).unwrap();
        assert_eq!((s.evidence_retired, s.edges_retired), (1, 1));
        assert!(buf.patch_prior("job-a", Vec::new()).is_empty());
        // Still to create (with its final state), not to update.
        assert_eq!(buf.created, vec![40]);
        assert!(buf.changed.is_empty());
        assert_eq!(kinds(&changes), vec![(ChangeKind::EdgeAsserted, Some(40)), (ChangeKind::EdgeRetired, Some(40))]);
    }
}
