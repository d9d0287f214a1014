//! Replay and late registration converge (issue 46): a dataset whose lineage was kept under an
//! external asset (`ext:openlineage:<namespace>/<name>`) before its table was catalogued, once it
//! resolves to a container, gives that container what the placeholder held. The jobs' and runs'
//! datasets naming the placeholder name the container (`Store::replace_io_ends`), each live edge
//! of the placeholder is asserted again between the container and its other end with the same
//! evidence rows, and the placeholder's edges retire (their evidence retired, the change log
//! saying so; as-of reads before still show them), all through `apply_assertions`; one
//! `EXTERNAL_ADOPTED` change records the adoption. Nothing moves when the dataset still resolves
//! to no container or nothing names the placeholder, so running it again changes nothing.
//!
//! `adopt_into` is the one path that moves; what decides is `lookup_dataset`, the rule every
//! read of a dataset by name follows. It runs wherever a placeholder's dataset can start to
//! resolve: a container registered or renamed (`upsertContainer`) or a datastore's namespaces
//! set (`upsertDatastore`), both through `adopt_placeholders`; a container auto-created for a
//! dataset (`Resolver::auto_create`); and `replay` (and the start's finishing of pending
//! events), once per dataset the replayed events name.

use std::collections::{BTreeMap, BTreeSet};

use super::{external_fqn, SOURCE_TYPE};
use crate::domain::{Assertion, AssertionBatch, ChangeKind, Container, End, Id, NewChange, NewEdge};
use crate::error::Result;
use crate::ingest::openlineage::naming::normalize_namespace;
use crate::service::Lineage;

/// An fqn's OpenLineage identity when no job dataset says it: the namespace is `scheme://host`
/// (up to the first `/` after `://`) or, without a scheme, what precedes the first `/`.
fn split_fqn(fqn: &str) -> Option<(String, String)> {
    let (ns, name) = match fqn.find("://") {
        Some(i) => {
            let j = fqn[i + 3..].find('/')? + i + 3;
            (&fqn[..j], &fqn[j + 1..])
        }
        None => fqn.split_once('/')?,
    };
    (!ns.trim().is_empty() && !name.trim().is_empty()).then(|| (ns.to_string(), name.to_string()))
}

impl Lineage {
    /// Moves what the placeholder of the OpenLineage dataset `namespace`/`name` holds to the
    /// container the dataset resolves to now (see the module). How many edges moved.
    pub async fn adopt_placeholder(&self, namespace: &str, name: &str) -> Result<usize> {
        let Some(Ok(container)) = self.dataset_node(namespace, name).await? else { return Ok(0) };
        self.adopt_into(namespace, name, None, &container).await
    }

    /// After a registration: each placeholder whose fqn (lowercased) contains `needle` and
    /// whose dataset now resolves to a container (to `only`, when given; in one of
    /// `namespaces`, when given) is adopted by it. How many edges moved.
    pub(crate) async fn adopt_placeholders(
        &self,
        needle: &str,
        only: Option<Id>,
        namespaces: Option<&[String]>,
    ) -> Result<usize> {
        let rows = self.store.external_placeholders(&needle.to_lowercase(), SOURCE_TYPE).await?;
        // Each fqn with the identities job datasets give it (none: only an edge names it).
        let mut found: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
        for (fqn, namespace, name) in rows {
            let idents = found.entry(fqn).or_default();
            if !namespace.trim().is_empty() && !name.trim().is_empty() {
                idents.insert((namespace, name));
            }
        }
        let wanted: Option<BTreeSet<String>> = namespaces.map(|n| n.iter().map(|n| normalize_namespace(n)).collect());
        let mut moved = 0;
        for (fqn, idents) in found {
            let idents: Vec<(String, String)> =
                if idents.is_empty() { split_fqn(&fqn).into_iter().collect() } else { idents.into_iter().collect() };
            for (namespace, name) in idents {
                if wanted.as_ref().is_some_and(|w| !w.contains(&normalize_namespace(&namespace))) {
                    continue;
                }
                let Some(Ok(container)) = self.dataset_node(&namespace, &name).await? else { continue };
                if only.is_some_and(|id| id != container.id) {
                    continue;
                }
                moved += self.adopt_into(&namespace, &name, Some(&fqn), &container).await?;
            }
        }
        Ok(moved)
    }

    /// The move itself (see the module): what the placeholder of `namespace`/`name` (its fqn as
    /// recorded, with the namespace folded, and `fqn` when given) holds goes to `container`.
    /// How many edges moved.
    pub(crate) async fn adopt_into(
        &self,
        namespace: &str,
        name: &str,
        fqn: Option<&str>,
        container: &Container,
    ) -> Result<usize> {
        let to = End::Container { id: container.id };
        let recorded = external_fqn(namespace.trim(), name.trim());
        let fqns: BTreeSet<String> = [
            recorded.clone(),
            external_fqn(&normalize_namespace(namespace), name.trim()),
            external_fqn(namespace, name),
        ]
        .into_iter()
        .chain(fqn.map(str::to_string))
        .collect();
        let from: Vec<End> = fqns.into_iter().map(|fqn| End::External { fqn }).collect();
        let edges = self.store.live_edges_touching_ends(&from, SOURCE_TYPE).await?;
        // Nothing to move: no change recorded, so adopting again is a no-op.
        if edges.is_empty() && self.store.jobs_of_ends(&from).await?.is_empty() {
            return Ok(0);
        }
        let now = crate::domain::now();
        if !edges.is_empty() {
            let ids: Vec<_> = edges.iter().map(|e| e.id).collect();
            let evidence = self.store.evidence_for_edges(&ids).await?;
            let mut batch = AssertionBatch::default();
            for e in &edges {
                let swap = |end: &End| if from.contains(end) { to.clone() } else { end.clone() };
                let (source, target) = (swap(&e.source), swap(&e.target));
                for ev in evidence.iter().filter(|v| v.edge_id == e.id && v.retired_at.is_none()) {
                    batch.retire_evidence.push((e.id, ev.key.clone()));
                    // A placeholder feeding the very table it is: no edge, as a self-read is none.
                    if source != target {
                        batch.assert.push(Assertion {
                            edge: NewEdge {
                                source: source.clone(),
                                target: target.clone(),
                                description: e.description.clone(),
                                source_type: e.source_type.clone(),
                                operation: e.operation.clone(),
                                derived: e.derived,
                                transformations: e.transformations.clone(),
                                last_asserted_at: e.last_asserted_at,
                            },
                            evidence: crate::domain::Evidence { edge_id: 0, ..ev.clone() },
                        });
                    }
                }
                batch.retire_candidates.push(e.id);
            }
            self.store.apply_assertions(batch, now).await?;
        }
        // Recorded with the datasets' move, the last step: a failure before it leaves something
        // to move, so the next registration or replay finishes the adoption and records it.
        let change = NewChange::container(ChangeKind::ExternalAdopted, container.id, now).with_detail(
            serde_json::json!({"fqn": recorded, "namespace": namespace, "name": name, "edges": edges.len()}),
        );
        let datasets = self.store.replace_io_ends(&from, &to, Some(change)).await?;
        tracing::info!(
            namespace,
            name,
            container = container.id,
            edges = edges.len(),
            datasets,
            "an external placeholder adopted by its container"
        );
        Ok(edges.len())
    }
}

#[cfg(test)]
mod tests {
    use super::split_fqn;

    #[test]
    fn fqns_split_after_the_authority() {
        let s = |ns: &str, n: &str| Some((ns.to_string(), n.to_string()));
        assert_eq!(split_fqn("postgres://h:5432/db.s.t"), s("postgres://h:5432", "db.s.t"));
        assert_eq!(split_fqn("s3://bucket/a/b"), s("s3://bucket", "a/b"));
        assert_eq!(split_fqn("bigquery/p.d.t"), s("bigquery", "p.d.t"));
        assert_eq!(split_fqn("postgres://h:5432"), None);
        assert_eq!(split_fqn("plain"), None);
    }
}
