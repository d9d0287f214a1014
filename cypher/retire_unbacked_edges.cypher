// Parameters: $ids ([int], distinct): candidate edge ids; $now (string, RFC 3339). Retires the
// live ones among these edges that no live evidence backs (each edge write-locked before it is
// checked) and returns their ids and intervals (JSON strings) so the caller can close the last
// interval.
UNWIND $ids AS id
MATCH ()-[r:LINEAGE {id: id}]->()
SET r.locked = true
REMOVE r.locked
WITH r
WHERE r.retired_at IS NULL
  AND NOT EXISTS { MATCH (e:Evidence {edge_id: r.id}) WHERE e.retired_at IS NULL }
SET r.retired_at = $now
RETURN r.id AS id, r.intervals AS intervals
ORDER BY id
