// Parameters: $new: [evidence properties as for put_evidence, retired_at null] of edges created
// in this same transaction (fresh ids, never reused: no evidence can exist for them, so CREATE,
// without MERGE's lookup and lock on the (edge_id, key) constraint); $other: the same for edges
// that existed, (edge_id, key) distinct; $changes: change rows as for record_changes.cypher, or
// [] when the caller records them later. One statement for the three, a round trip each fewer.
// $other rows are upserted live (every attribute replaced but the operation that first observed
// the evidence, which stays, and the last one, kept when the row names none). Returns `created`:
// the rows of $new plus those of $other that were missing or retired before.
// The change log part is what record_changes.cypher does, last in the statement: it takes the
// `change` counter's write lock, held until the transaction commits (see that file for why), so
// the caller sends non-empty $changes only when this is its transaction's last statement.
CALL () {
  UNWIND $new AS row
  CREATE (e:Evidence)
  SET e = row
  RETURN count(e) AS fresh
}
CALL () {
  UNWIND $other AS row
  OPTIONAL MATCH (old:Evidence {edge_id: row.edge_id, key: row.key})
  WITH row, old IS NOT NULL AND old.retired_at IS NULL AS was_live,
       old.first_observed_operation_id AS first_op, old.last_observed_operation_id AS last_op
  MERGE (e:Evidence {edge_id: row.edge_id, key: row.key})
  SET e = row
  SET e.first_observed_operation_id = coalesce(first_op, row.first_observed_operation_id),
      e.last_observed_operation_id = coalesce(row.last_observed_operation_id, last_op)
  RETURN count(CASE WHEN was_live THEN null ELSE 1 END) AS revived
}
CALL () {
  UNWIND $changes[0..1] AS any
  MERGE (k:Counter {name: 'change'})
  ON CREATE SET k.value = 0
  SET k.value = k.value + size($changes)
  WITH k.value - size($changes) AS base
  UNWIND range(0, size($changes) - 1) AS i
  WITH base, i, $changes[i] AS row
  CREATE (c:Change {
    position: base + i + 1,
    at: row.at,
    kind: row.kind,
    edge_id: row.edge_id,
    field_id: row.field_id,
    container_a: row.container_a,
    container_b: row.container_b,
    detail: row.detail
  })
  RETURN count(c) AS recorded
}
RETURN fresh + revived AS created, recorded
