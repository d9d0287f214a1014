// Parameters: $ids ([int], distinct), $now (string, RFC 3339). Sets `retired_at` on the live ones
// among these edges (write-locking them) and returns their ids and intervals (JSON strings) so the
// caller can close the open interval.
UNWIND $ids AS id
MATCH ()-[r:LINEAGE {id: id}]->()
WHERE r.retired_at IS NULL
SET r.retired_at = $now
RETURN r.id AS id, r.intervals AS intervals
