// Parameters: $rows: [{edge_id: int, key: string}], distinct; $now (string, RFC 3339).
// Retires the listed evidence that is still live (each node write-locked before its
// `retired_at` is read) and returns how many.
UNWIND $rows AS row
MATCH (e:Evidence {edge_id: row.edge_id, key: row.key})
SET e.locked = true
REMOVE e.locked
WITH e
WHERE e.retired_at IS NULL
SET e.retired_at = $now
RETURN count(e) AS retired
