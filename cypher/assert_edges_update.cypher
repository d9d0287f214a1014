// Parameters: $rows: [{id: int, intervals: string (JSON list of {from, to}), last_asserted_at:
// string (RFC 3339) or null, operation: string or null, derived: bool or null, transformations:
// string (JSON) or null}], ids distinct; $evidence: [evidence properties as for put_evidence,
// retired_at null], (edge_id, key) distinct, of these edges.
// Existing edges asserted again: live (`retired_at` removed) with the attributes the caller
// computed (a null removes the property); and their evidence upserted live (replacing every
// attribute but the operation that first observed it, which stays, and the last one, kept when
// the row names none). Returns how many edges it updated and how many evidence rows were missing
// or retired before: the evidence the batch created. One statement instead of two.
CALL () {
  UNWIND $rows AS row
  MATCH ()-[r:LINEAGE {id: row.id}]->()
  SET r.retired_at = null,
      r.intervals = row.intervals,
      r.last_asserted_at = row.last_asserted_at,
      r.operation = row.operation,
      r.derived = row.derived,
      r.transformations = row.transformations
  RETURN count(r) AS updated
}
CALL () {
  UNWIND $evidence AS row
  OPTIONAL MATCH (old:Evidence {edge_id: row.edge_id, key: row.key})
  WITH row, old IS NOT NULL AND old.retired_at IS NULL AS was_live,
       old.first_observed_operation_id AS first_op, old.last_observed_operation_id AS last_op
  MERGE (e:Evidence {edge_id: row.edge_id, key: row.key})
  SET e = row
  SET e.first_observed_operation_id = coalesce(first_op, row.first_observed_operation_id),
      e.last_observed_operation_id = coalesce(row.last_observed_operation_id, last_op)
  RETURN count(CASE WHEN was_live THEN null ELSE 1 END) AS created
}
RETURN updated, created
