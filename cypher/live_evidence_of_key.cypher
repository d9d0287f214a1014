// Parameters: $key (string). The live evidence with this key, by edge id, each with the ends of
// the edge it backs (`found` false when the edge is gone): an OpenLineage job's lineage so far,
// in one auto-commit read instead of an evidence read and an edge read. Only the columns the
// job's next event needs, not whole nodes: a job may back hundreds of edges.
MATCH (v:Evidence {key: $key})
WHERE v.retired_at IS NULL
OPTIONAL MATCH ()-[r:LINEAGE {id: v.edge_id}]->()
RETURN {
  edge_id: v.edge_id, key: v.key, details: v.details, found: r IS NOT NULL,
  source_kind: r.source_kind, source_id: r.source_id, source_container_id: r.source_container_id,
  source_fqn: r.source_fqn,
  target_kind: r.target_kind, target_id: r.target_id, target_container_id: r.target_container_id,
  target_fqn: r.target_fqn
} AS prior
ORDER BY v.edge_id
