// Parameters: $rows: [{at: string (RFC 3339), kind: string, edge_id, field_id, container_a,
// container_b: int or null, detail: string (JSON) or null}], in order. Appends them to the change
// log with the next positions of the `change` counter. Every lineage write runs this as its LAST
// statement: the counter's write lock, taken here, is then held until the transaction commits,
// so positions are handed out in commit order and a reader never sees a position commit below
// one it has already read (see ARCHITECTURE.md, "The change log").
MERGE (k:Counter {name: 'change'})
ON CREATE SET k.value = 0
SET k.value = k.value + size($rows)
WITH k.value - size($rows) AS base
UNWIND range(0, size($rows) - 1) AS i
WITH base, i, $rows[i] AS row
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
