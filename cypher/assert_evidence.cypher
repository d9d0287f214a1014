// Parameters: $rows: [evidence properties as for put_evidence, retired_at null], (edge_id, key)
// distinct. Upserts each row live (replacing every attribute) and counts the rows that were
// missing or retired before: the evidence the batch created.
UNWIND $rows AS row
OPTIONAL MATCH (old:Evidence {edge_id: row.edge_id, key: row.key})
WITH row, old IS NOT NULL AND old.retired_at IS NULL AS was_live
MERGE (e:Evidence {edge_id: row.edge_id, key: row.key})
SET e = row
RETURN count(CASE WHEN was_live THEN null ELSE 1 END) AS created
