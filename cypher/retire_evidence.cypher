// Parameters: $ids ([int], distinct): edge ids; $now (string, RFC 3339). Retires the edges'
// evidence that is not retired yet.
UNWIND $ids AS id
MATCH (e:Evidence {edge_id: id})
WHERE e.retired_at IS NULL
SET e.retired_at = $now
