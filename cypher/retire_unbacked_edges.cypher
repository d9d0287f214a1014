// Parameters: $ids ([int], distinct): candidate edge ids; $now (string, RFC 3339). Retires the
// live ones among these edges that no live evidence backs (each edge write-locked before it is
// checked) and returns their ids, intervals (JSON strings) and the edges as they were, so the
// caller can close the last interval and record the retirements.
UNWIND $ids AS id
MATCH ()-[r:LINEAGE {id: id}]->()
SET r.locked = true
REMOVE r.locked
WITH r
WHERE r.retired_at IS NULL
  AND NOT EXISTS { MATCH (e:Evidence {edge_id: r.id}) WHERE e.retired_at IS NULL }
WITH r, r {.*} AS before
SET r.retired_at = $now
RETURN r.id AS id, r.intervals AS intervals, before AS edge
ORDER BY id
