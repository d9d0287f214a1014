//! Replay and late registration converge (issue 46): a dataset whose lineage was kept under an
//! external asset (`ext:openlineage:<namespace>/<name>`) before its table was catalogued, once it
//! resolves to a container, gives that container what the placeholder held. The jobs' and runs'
//! datasets naming the placeholder name the container (`Store::replace_io_end`), each live edge
//! of the placeholder is asserted again between the container and its other end with the same
//! evidence rows, and the placeholder's edges retire (their evidence retired, the change log
//! saying so), all through `apply_assertions`. Nothing moves when the dataset still resolves to no
//! container or nothing names the placeholder, so running it again changes nothing.
//!
//! It runs where a dataset's events are applied again after its table was registered: `replay`
//! (and the start's finishing of pending events), once per dataset the replayed events name. The
//! ingest of new events does not pay for it: there a later COMPLETE of the job reconciles its
//! edges, and the job's datasets gain the container beside the placeholder until a replay.

use std::collections::BTreeSet;

use super::{external_fqn, SOURCE_TYPE};
use crate::domain::{Assertion, AssertionBatch, End, NewEdge};
use crate::error::Result;
use crate::ingest::openlineage::naming::normalize_namespace;
use crate::service::Lineage;

impl Lineage {
    /// Moves what the placeholder of the OpenLineage dataset `namespace`/`name` holds to the
    /// container the dataset resolves to now (see the module). How many edges moved.
    pub async fn adopt_placeholder(&self, namespace: &str, name: &str) -> Result<usize> {
        let Some(Ok(container)) = self.dataset_node(namespace, name).await? else { return Ok(0) };
        let to = End::Container { id: container.id };
        // The fqn as recorded (the namespace as sent), and with the namespace folded.
        let fqns: BTreeSet<String> =
            [external_fqn(namespace.trim(), name.trim()), external_fqn(&normalize_namespace(namespace), name.trim())]
                .into_iter()
                .collect();
        let from: Vec<End> = fqns.into_iter().map(|fqn| End::External { fqn }).collect();
        for f in &from {
            self.store.replace_io_end(f, &to).await?;
        }
        let edges = self.store.live_edges_touching_ends(&from, SOURCE_TYPE).await?;
        if edges.is_empty() {
            return Ok(0);
        }
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
        self.store.apply_assertions(batch, crate::domain::now()).await?;
        tracing::info!(
            namespace,
            name,
            container = container.id,
            edges = edges.len(),
            "an external placeholder's lineage moved to its container"
        );
        Ok(edges.len())
    }
}
