//! Turning a resolved OpenLineage event into one `AssertionBatch` by the run-state rules (see
//! the parent module): lifecycle drops and renames, what a FAIL, COMPLETE or job event retires,
//! the table- and field-level edges it asserts, and the EDITOR check over the whole batch.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Value};

use super::report::Pending;
use super::resolve::Resolver;
use super::runs::PriorDatasets;
use super::{state_name, Unresolved, SOURCE_TYPE};
use crate::domain::{Assertion, AssertionBatch, AssertionSummary, End, Evidence, Id, NewEdge};
use crate::error::{Error, Result};
use crate::ingest::openlineage::{self as ol, Event, EventKind, Limits, RunState};
use crate::service::{Caller, Lineage};
use crate::store::PriorEvidence;

/// The evidence key an OpenLineage job's edges are asserted under (one per job and kind).
pub(crate) fn job_key(kind: EventKind, namespace: &str, name: &str) -> String {
    let k = if kind == EventKind::Job { "job" } else { "run" };
    // A tuple serializes as the JSON array it always was; strings cannot fail to.
    serde_json::to_string(&("openlineage", k, namespace, name)).unwrap_or_default()
}

/// What applying a resolved event did.
pub(super) struct Applied {
    pub(super) summary: AssertionSummary,
    pub(super) metadata: i64,
    /// The datasets (and column-lineage fields) that stayed unresolved; a dataset that resolved
    /// through any of its names is not among them.
    pub(super) unresolved: Vec<Unresolved>,
    /// Set when the event was skipped on purpose: a START or RUNNING of a run that already
    /// failed or aborted.
    pub(super) late_start: bool,
}

impl Applied {
    fn new(
        summary: AssertionSummary,
        metadata: i64,
        unresolved: BTreeSet<Unresolved>,
        resolver: &Resolver<'_>,
    ) -> Applied {
        let unresolved =
            unresolved.into_iter().filter(|u| u.field.is_some() || !resolver.resolved(&u.namespace, &u.name)).collect();
        Applied { summary, metadata, unresolved, late_start: false }
    }

    fn late_start(mut self) -> Applied {
        self.late_start = true;
        self
    }
}

impl Lineage {
    pub(super) async fn apply_resolved(
        &self,
        caller: &Caller,
        event_id: Id,
        event: &Event,
        pending: &mut Pending,
        resolver: &mut Resolver<'_>,
    ) -> Result<Applied> {
        let key = event.job.as_ref().map(|job| job_key(event.kind, &job.namespace, &job.name));
        let run_id = event.run_id.clone().unwrap_or_default();
        let state = event.event_type;
        let starts = super::prior::starts(event);
        let check_run = key.is_some() && starts && !pending.failed_runs.contains(&run_id);
        // What the chunk read ahead (see `prior`); the rest is read here.
        let datasets_run = super::runs::prior_datasets_run(event);
        let evidence_ahead = key.as_deref().and_then(|k| pending.prior.evidence(k));
        let states_ahead = check_run.then(|| pending.prior.states(&run_id)).flatten();
        let run_ahead = datasets_run.and_then(|r| pending.prior.run(r));
        let (evidence_read, states_read, run_read) =
            (evidence_ahead.is_none(), states_ahead.is_none(), run_ahead.is_none());
        // Independent reads side by side: on Neo4j each is a round trip of its own.
        let (prefetched, states, prior, known_run) = tokio::join!(
            resolver.prefetch(event),
            async {
                match (check_run, states_ahead) {
                    (false, _) => Ok(None),
                    (true, Some(states)) => Ok(Some(states)),
                    (true, None) => self.store.run_event_states(&run_id).await.map(Some),
                }
            },
            async {
                match (key.as_deref(), evidence_ahead) {
                    (Some(_), Some(prior)) => Ok(prior),
                    (k, _) => self.prior_evidence(k).await,
                }
            },
            async {
                match (datasets_run, run_ahead) {
                    (None, _) => Ok(None),
                    (Some(_), Some(run)) => Ok(Some(run)),
                    (Some(r), None) => self.store.run_with_io(r).await.map(Some),
                }
            },
        );
        prefetched?;
        let (states, prior, known_run) = (states?, prior?, known_run?);
        pending.prior.keep(
            key.as_deref().filter(|_| evidence_read).map(|k| (k, prior.as_slice())),
            states.as_ref().filter(|_| states_read).map(|s| (run_id.as_str(), s)),
            datasets_run.zip(known_run.as_ref()).filter(|_| run_read),
        );
        let prior_datasets = super::runs::prior_datasets(event, known_run);
        let mut unresolved = BTreeSet::new();
        let mut batch = AssertionBatch::default();

        // Lifecycle changes first: a DROP retires every OpenLineage edge touching the dataset.
        let mut dropped: Vec<End> = Vec::new();
        for d in event.inputs.iter().chain(&event.outputs).chain(event.dataset.iter()) {
            if d.lifecycle.as_ref().is_some_and(|l| l.change == ol::LifecycleChange::Drop) {
                dropped.extend(resolver.existing_ends(d, &mut unresolved).await?.into_iter().map(|(e, _)| e));
            }
        }
        if !dropped.is_empty() {
            // The dropped tables' fields go with them: their column lineage retires too.
            let tables: Vec<Id> = dropped.iter().filter_map(|e| e.container_id()).collect();
            if !tables.is_empty() {
                let fields = self.store.field_names_of_containers(&tables).await?;
                dropped.extend(fields.into_iter().map(|(container_id, id, _)| End::Field { id, container_id }));
            }
            let edges = self.store.live_edges_touching_ends(&dropped, SOURCE_TYPE).await?;
            let ids: Vec<Id> = edges.iter().map(|e| e.id).collect();
            self.retire_edges_in(&mut batch, &ids).await?;
        }
        // A RENAME moves the previous name's live OpenLineage lineage to the new name: each
        // edge is asserted again at the new end with its evidence, and the old one retires.
        let mut renamed: Vec<Assertion> = Vec::new();
        for d in event.inputs.iter().chain(&event.outputs).chain(event.dataset.iter()) {
            let Some(lc) = d.lifecycle.as_ref().filter(|l| l.change == ol::LifecycleChange::Rename) else { continue };
            let Some(prev) = &lc.previous else { continue };
            let old_ds =
                ol::Dataset { namespace: prev.namespace.clone(), name: prev.name.clone(), ..Default::default() };
            let olds = resolver.existing_ends(&old_ds, &mut unresolved).await?;
            let news = resolver.end(d, &mut unresolved).await?;
            // Each old end moves to the new end in its own datastore, else to the best new end.
            let moves: Vec<(End, End)> = olds
                .iter()
                .filter_map(|(old, oc)| {
                    let same_store = news
                        .iter()
                        .find(|(_, nc)| matches!((oc, nc), (Some(o), Some(n)) if o.datastore_id == n.datastore_id));
                    let (new, _) = same_store.or(news.first())?;
                    (old != new).then(|| (old.clone(), new.clone()))
                })
                .collect();
            for (old, new) in moves {
                let edges = self.store.live_edges_touching_ends(std::slice::from_ref(&old), SOURCE_TYPE).await?;
                let evidence = self.store.evidence_for_edges(&edges.iter().map(|e| e.id).collect::<Vec<_>>()).await?;
                for e in edges.iter().filter(|e| !e.is_field_edge()) {
                    let swap = |end: &End| if *end == old { new.clone() } else { end.clone() };
                    let (source, target) = (swap(&e.source), swap(&e.target));
                    for ev in evidence.iter().filter(|v| v.edge_id == e.id && v.retired_at.is_none()) {
                        if source != target {
                            renamed.push(Assertion {
                                edge: NewEdge {
                                    source: source.clone(),
                                    target: target.clone(),
                                    description: e.description.clone(),
                                    source_type: SOURCE_TYPE.into(),
                                    operation: e.operation.clone(),
                                    derived: e.derived,
                                    transformations: e.transformations.clone(),
                                    last_asserted_at: Some(event.event_time),
                                },
                                evidence: ev.clone(),
                            });
                        }
                        batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                    }
                    batch.retire_candidates.push(e.id);
                }
            }
        }

        // Creating containers (auto-creation, zero-setup) comes before metadata, so a created
        // container gets the event's descriptions, tags and owners too. A dropped dataset is
        // never created.
        if resolver.creates() {
            for d in event.datasets() {
                if d.lifecycle.as_ref().is_none_or(|l| l.change != ol::LifecycleChange::Drop) {
                    resolver.end(d, &mut unresolved).await?;
                }
            }
        }
        batch.metadata = self.metadata_of(resolver, event, event_id).await?;
        let new_tags = self.new_tags(caller, &batch.metadata).await?;

        if key.is_none() {
            // A DatasetEvent carries no lineage of its own.
            batch.assert.extend(std::mem::take(&mut renamed));
            self.check_batch(caller, &batch, resolver.known_datastores()).await?;
            let metadata = batch.metadata.len() as i64;
            let note = pending.prior.note(&batch);
            let (sum, edge_ids) = self.store.apply_assertions_with_ids(batch, crate::domain::now()).await?;
            pending.prior.applied(note, &edge_ids);
            self.register_tags(new_tags).await?;
            return Ok(Applied::new(sum, metadata, unresolved, resolver));
        }

        // A run's terminal state is sticky: a late START or RUNNING of a completed run still
        // adds its lineage, but its evidence keeps saying COMPLETE (as-of and diff answers
        // read it as the run's outcome).
        let completed = starts
            && (pending.completed_runs.contains(&run_id)
                || states.as_deref().unwrap_or_default().iter().any(|(id, status, event_type)| {
                    *id != event_id && super::report::accepted(status) && event_type.as_deref() == Some("COMPLETE")
                }));
        // A run that already failed or aborted is not undone by a late START or RUNNING.
        if starts {
            // A run that failed stays failed; its late START or RUNNING still joins its history.
            let failed = pending.failed_runs.contains(&run_id)
                // A FAIL that had nothing to retire was `ignored`, but the run failed all the same.
                || states.unwrap_or_default().iter().any(|(id, status, event_type)| {
                    *id != event_id
                        && super::report::accepted(status)
                        && matches!(event_type.as_deref(), Some("FAIL") | Some("ABORT"))
                });
            if failed {
                if let Some(key) = &key {
                    pending.prior.recorded(event.run_id.as_deref());
                    self.record_job_and_run(event, event_id, key, None).await?;
                }
                return Ok(Applied::new(AssertionSummary::default(), 0, unresolved, resolver).late_start());
            }
        }

        let assertions =
            self.assertions_of(resolver, &mut unresolved, event, event_id, caller, &prior_datasets).await?;
        let asserted_ukeys: BTreeSet<(String, String)> =
            assertions.iter().map(|a| (a.edge.source.key(), a.edge.target.key())).collect();

        match (event.kind, state) {
            (EventKind::Run, Some(RunState::Fail) | Some(RunState::Abort)) => {
                // Retire what this run alone asserted; lineage an earlier run also asserted stays.
                for ev in &prior {
                    if ev.first_run_id.as_deref() == Some(run_id.as_str()) {
                        batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                        batch.retire_candidates.push(ev.edge_id);
                    }
                }
            }
            (EventKind::Run, Some(RunState::Complete)) => {
                let mut combined = asserted_ukeys.clone();
                for ev in prior.iter().filter(|e| e.run_id.as_deref() == Some(run_id.as_str())) {
                    if let Some(k) = &ev.ends {
                        combined.insert(k.clone());
                    }
                }
                if !combined.is_empty() {
                    for ev in &prior {
                        let still = ev.ends.as_ref().is_some_and(|k| combined.contains(k));
                        if !still {
                            batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                            batch.retire_candidates.push(ev.edge_id);
                        }
                    }
                }
                batch.assert = assertions;
            }
            (EventKind::Job, _) => {
                if !asserted_ukeys.is_empty() {
                    for ev in &prior {
                        if !ev.ends.as_ref().is_some_and(|k| asserted_ukeys.contains(k)) {
                            batch.retire_evidence.push((ev.edge_id, ev.key.clone()));
                            batch.retire_candidates.push(ev.edge_id);
                        }
                    }
                }
                batch.assert = assertions;
            }
            _ => batch.assert = assertions,
        }
        // Keep the first run that asserted each edge, so FAIL/ABORT can tell what was theirs.
        let first_runs: HashMap<(&str, &str), &str> = prior
            .iter()
            .filter_map(|e| {
                let (s, t) = e.ends.as_ref()?;
                Some(((s.as_str(), t.as_str()), e.first_run_id.as_deref()?))
            })
            .collect();
        for a in &mut batch.assert {
            if let Some(details) = a.evidence.details.as_mut().filter(|_| completed) {
                details["runState"] = json!(state_name(Some(RunState::Complete)));
            }
            let k = (a.edge.source.key(), a.edge.target.key());
            if let (Some(first), Some(details)) =
                (first_runs.get(&(k.0.as_str(), k.1.as_str())), a.evidence.details.as_mut())
            {
                details["firstRunId"] = json!(first);
            }
        }
        batch.assert.extend(renamed);
        self.check_batch(caller, &batch, resolver.known_datastores()).await?;
        let metadata = batch.metadata.len() as i64;
        let note = pending.prior.note(&batch);
        let (sum, edge_ids) = self.store.apply_assertions_with_ids(batch, crate::domain::now()).await?;
        pending.prior.applied(note, &edge_ids);
        if let Some(key) = &key {
            pending.prior.recorded(event.run_id.as_deref());
            self.record_job_and_run(event, event_id, key, Some(resolver)).await?;
        }
        self.register_tags(new_tags).await?;
        Ok(Applied::new(sum, metadata, unresolved, resolver))
    }

    /// The live evidence of a job's earlier events (none without a job), each with its edge's ends.
    async fn prior_evidence(&self, key: Option<&str>) -> Result<Vec<PriorEvidence>> {
        let Some(key) = key else { return Ok(Vec::new()) };
        Ok(self.store.live_evidence_of_key(key).await?)
    }

    /// Seed 000: EDITOR on the datastore of every container a connection touches, the
    /// connections the event retires included; metadata changes need it on their container's.
    /// `known` maps the containers the resolver already read to their datastores, so only the
    /// others (ends of retired edges, mostly) cost a read.
    async fn check_batch(&self, caller: &Caller, batch: &AssertionBatch, known: &HashMap<Id, Id>) -> Result<()> {
        if caller.unrestricted_admin {
            return Ok(());
        }
        let mut ends: Vec<End> =
            batch.assert.iter().flat_map(|a| [a.edge.source.clone(), a.edge.target.clone()]).collect();
        let retiring: Vec<Id> =
            batch.retire_candidates.iter().chain(batch.retire_evidence.iter().map(|(id, _)| id)).copied().collect();
        if !retiring.is_empty() {
            for e in self.store.edges_by_ids(&retiring).await? {
                ends.push(e.source);
                ends.push(e.target);
            }
        }
        ends.extend(batch.metadata.iter().map(|m| End::Container { id: m.container_id }));
        let (seen, unseen): (Vec<&End>, Vec<&End>) =
            ends.iter().partition(|e| e.container_id().is_some_and(|c| known.contains_key(&c)));
        let mut datastores: BTreeSet<Id> =
            seen.iter().filter_map(|e| e.container_id().and_then(|c| known.get(&c).copied())).collect();
        datastores.extend(self.datastores_of_ends(unseen).await?);
        caller.require(datastores, crate::auth::Permission::Editor, "this OpenLineage event")
    }

    /// Table-level edges from inputs × outputs and field-level edges from the column lineage.
    async fn assertions_of(
        &self,
        resolver: &mut Resolver<'_>,
        unresolved: &mut BTreeSet<Unresolved>,
        event: &Event,
        event_id: Id,
        caller: &Caller,
        prior: &PriorDatasets,
    ) -> Result<Vec<Assertion>> {
        let Some(job) = &event.job else { return Ok(Vec::new()) };
        let key = job_key(event.kind, &job.namespace, &job.name);
        let run_id = event.run_id.clone();
        let operation = if event.kind == EventKind::Job { "job_event" } else { "run_event" };
        let evidence = |details: Value| Evidence {
            edge_id: 0,
            key: key.clone(),
            provider: event.producer.clone(),
            evidence_type: operation.to_string(),
            authorship: "asserted".to_string(),
            source_relation: serde_json::to_string(&(&job.namespace, &job.name)).ok(),
            observed_at: Some(event.event_time),
            first_observed_operation_id: None,
            last_observed_operation_id: None,
            details: Some(details),
            retired_at: None,
        };
        let base = |source: &ol::Dataset, target: &ol::Dataset| {
            json!({
                "runId": run_id,
                "firstRunId": run_id,
                "runState": state_name(event.event_type),
                "job": {"namespace": job.namespace, "name": job.name},
                "source": {"namespace": source.namespace, "name": source.name},
                "target": {"namespace": target.namespace, "name": target.name},
                "eventId": event_id,
                "submittedBy": caller.user,
                "parent": event.parent.as_ref().map(|p| json!({"runId": p.run_id, "job": {"namespace": p.job.namespace, "name": p.job.name}})),
            })
        };
        // The run's datasets from its earlier events are paired with this event's (never with
        // each other: those pairs were asserted by the events that named them).
        let mut inputs = Vec::new();
        for (d, earlier) in event.inputs.iter().map(|d| (d, false)).chain(prior.inputs.iter().map(|d| (d, true))) {
            inputs.push((d, earlier, resolver.end(d, unresolved).await?));
        }
        let mut outputs = Vec::new();
        for (d, earlier) in event.outputs.iter().map(|d| (d, false)).chain(prior.outputs.iter().map(|d| (d, true))) {
            outputs.push((d, earlier, resolver.end(d, unresolved).await?));
        }
        // A table edge between two datasets' ends; `implied` when only column lineage names the
        // input. A dataset reading itself is no edge; two unknown ends make no relationship (the
        // event stays stored for replay).
        let table_edge = |i: &ol::Dataset, o: &ol::Dataset, ie: &End, oe: &End, known: bool, implied: bool| {
            if ie == oe || !known {
                return None;
            }
            let mut details = base(i, o);
            details["sql"] = json!(event.job_sql);
            details["sourceCode"] =
                json!(event.job_source_code.as_ref().map(|c| json!({"language": c.language, "sourceCode": c.code})));
            if implied {
                details["impliedBy"] = json!("columnLineage");
            }
            Some(Assertion {
                edge: NewEdge {
                    source: ie.clone(),
                    target: oe.clone(),
                    description: None,
                    source_type: SOURCE_TYPE.into(),
                    operation: Some(operation.into()),
                    derived: None,
                    transformations: None,
                    last_asserted_at: Some(event.event_time),
                },
                evidence: evidence(details),
            })
        };
        let mut out = Vec::new();
        // A dataset matching several writable datastores contributes one end per datastore.
        for (i, input_earlier, input_ends) in &inputs {
            for (o, output_earlier, output_ends) in &outputs {
                if *input_earlier && *output_earlier {
                    continue;
                }
                for (ie, ic) in input_ends {
                    for (oe, oc) in output_ends {
                        out.extend(table_edge(i, o, ie, oe, ic.is_some() || oc.is_some(), false));
                    }
                }
            }
        }
        // Column lineage implies table lineage: a dataset only an output's column lineage names
        // (dbt leaves seeds out of a model's `inputs`) is that output's parent all the same.
        for (o, _, output_ends) in &outputs {
            let named: BTreeSet<(&str, &str)> =
                o.column_inputs().map(|f| (f.namespace.as_str(), f.name.as_str())).collect();
            for (namespace, name) in named {
                if event.inputs.iter().any(|d| d.namespace == namespace && d.name == name) {
                    continue;
                }
                let source_ds = resolver.input_dataset(namespace, name);
                for (ie, ic) in resolver.end(&source_ds, unresolved).await? {
                    for (oe, oc) in output_ends {
                        out.extend(table_edge(&source_ds, o, &ie, oe, ic.is_some() || oc.is_some(), true));
                    }
                }
            }
        }
        // Column lineage: both ends must be catalogued fields.
        for (o, _, output_ends) in &outputs {
            let targets: Vec<Id> = output_ends.iter().filter_map(|(_, c)| c.as_ref().map(|c| c.id)).collect();
            if (o.column_lineage.is_empty() && o.dataset_wide.is_empty()) || targets.is_empty() {
                continue;
            }
            for edge in o.column_edges() {
                // The input field's dataset with every name the event gives it (its symlinks).
                let source_ds = resolver.input_dataset(&edge.input.namespace, &edge.input.name);
                let sources: Vec<Id> = resolver
                    .end(&source_ds, unresolved)
                    .await?
                    .into_iter()
                    .filter_map(|(_, c)| c.map(|c| c.id))
                    .collect();
                let mut pairs = Vec::new();
                for oc in &targets {
                    let Some(t) = self.field_id_cached(&mut resolver.fields, *oc, &edge.output_field).await? else {
                        continue;
                    };
                    for sc in &sources {
                        if let Some(s) = self.field_id_cached(&mut resolver.fields, *sc, &edge.input.field).await? {
                            pairs.push(((*sc, s), (*oc, t)));
                        }
                    }
                }
                if pairs.is_empty() {
                    unresolved.insert(Unresolved {
                        namespace: edge.input.namespace.clone(),
                        name: edge.input.name.clone(),
                        field: Some(edge.input.field.clone()),
                        reason: "missingColumns",
                        message: format!(
                            "column lineage {} -> {} does not resolve to catalogued fields (at {})",
                            edge.input.field, edge.output_field, edge.pointer
                        ),
                    });
                    continue;
                }
                let transformations: Vec<Value> = edge
                    .input
                    .transformations
                    .iter()
                    .map(|t| json!({"type": t.kind.as_str(), "subtype": t.subtype, "description": t.description, "masking": t.masking}))
                    .collect();
                for ((sc, s), (oc, t)) in pairs {
                    if s == t {
                        continue;
                    }
                    let mut details = base(&source_ds, o);
                    details["transformations"] = Value::Array(transformations.clone());
                    out.push(Assertion {
                        edge: NewEdge {
                            source: End::Field { id: s, container_id: sc },
                            target: End::Field { id: t, container_id: oc },
                            description: None,
                            source_type: SOURCE_TYPE.into(),
                            operation: Some(operation.into()),
                            derived: ol::derived(&edge.input.transformations),
                            transformations: Some(Value::Array(transformations.clone())),
                            last_asserted_at: Some(event.event_time),
                        },
                        evidence: evidence(details),
                    });
                }
            }
        }
        // One assertion per edge: the same pair reported twice in one event is one edge.
        let mut seen = BTreeSet::new();
        out.retain(|a| seen.insert((a.edge.source.key(), a.edge.target.key())));
        // Seed 000: the limit counts the writable datastore matches too, so a dataset matching
        // several datastores cannot multiply an event past it.
        let max = Limits::default().max_relationships;
        if out.len() > max {
            return Err(Error::BadInput(format!(
                "the event attempts {} relationships once its datasets are matched to the datastores you can edit; at most {max} are accepted",
                out.len()
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_keys_are_unambiguous() {
        assert_ne!(job_key(EventKind::Run, "a|b", "c"), job_key(EventKind::Run, "a", "b|c"));
        assert_ne!(job_key(EventKind::Run, "a", "b"), job_key(EventKind::Job, "a", "b"));
        // Stored in every store's evidence: the text must never change.
        assert_eq!(job_key(EventKind::Run, "ns", "j\"1"), r#"["openlineage","run","ns","j\"1"]"#);
    }
}
