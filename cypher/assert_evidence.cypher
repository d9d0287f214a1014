// Parameters: $rows: [evidence properties as for put_evidence, retired_at null], (edge_id, key)
// distinct. Upserts each row live (replacing every attribute but the operation that first
// observed it, which stays, and the last one, kept when the row names none) and counts the rows
// that were missing or retired before: the evidence the batch created.
UNWIND $rows AS row
OPTIONAL MATCH (old:Evidence {edge_id: row.edge_id, key: row.key})
WITH row, old IS NOT NULL AND old.retired_at IS NULL AS was_live,
     old.first_observed_operation_id AS first_op, old.last_observed_operation_id AS last_op
MERGE (e:Evidence {edge_id: row.edge_id, key: row.key})
SET e = row
SET e.first_observed_operation_id = coalesce(first_op, row.first_observed_operation_id),
    e.last_observed_operation_id = coalesce(row.last_observed_operation_id, last_op)
RETURN count(CASE WHEN was_live THEN null ELSE 1 END) AS created
