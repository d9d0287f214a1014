// Parameters: $key (string). The live evidence with this key, by edge id, each with the edge it
// backs (an empty list when the edge is gone): an OpenLineage job's lineage so far, in one
// auto-commit read instead of an evidence read and an edge read.
MATCH (v:Evidence {key: $key})
WHERE v.retired_at IS NULL
OPTIONAL MATCH ()-[r:LINEAGE {id: v.edge_id}]->()
RETURN v {.*} AS evidence, CASE WHEN r IS NULL THEN [] ELSE [r {.*}] END AS edge
ORDER BY v.edge_id
