// Parameters: $ids ([int], distinct), $now (string, RFC 3339). Sets `retired_at` on the live ones
// among these edges (write-locking them) and returns them as they were, intervals (JSON strings)
// included, so the caller can close the open interval and record the retirements.
UNWIND $ids AS id
MATCH ()-[r:LINEAGE {id: id}]->()
WHERE r.retired_at IS NULL
WITH r, r {.*} AS before
SET r.retired_at = $now
RETURN r.id AS id, r.intervals AS intervals, before AS edge
