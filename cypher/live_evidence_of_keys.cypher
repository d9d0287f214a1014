// Parameters: $keys: [string] (distinct). `live_evidence_of_key` for many keys in one
// auto-commit read: the live evidence of each key, by key in the given order, then by edge id,
// each with the edge it backs (an empty list when the edge is gone). A chunk of OpenLineage
// events reads its jobs' lineage so far with it before its first event is applied.
UNWIND range(0, size($keys) - 1) AS i
WITH i, $keys[i] AS key
MATCH (v:Evidence {key: key})
WHERE v.retired_at IS NULL
OPTIONAL MATCH ()-[r:LINEAGE {id: v.edge_id}]->()
RETURN v {.*} AS evidence, CASE WHEN r IS NULL THEN [] ELSE [r {.*}] END AS edge
ORDER BY i, v.edge_id
