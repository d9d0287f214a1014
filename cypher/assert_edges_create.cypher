// Parameters: $rows: [map of LINEAGE properties as for create_edges.cypher, `id` ignored], in
// creation order; $first: int, the first of size($rows) consecutive ids reserved for them (the
// store's `ids`); $evidence: [[evidence properties as for put_evidence, retired_at null,
// `edge_id` ignored]], the n-th list the n-th edge's evidence, keys distinct.
// Creates an assertion batch's new edges, the n-th with id $first + n, and their evidence (one
// statement instead of create_edges and an evidence write: a round trip fewer per event that
// creates edges). The evidence is CREATEd, without MERGE's lookup and lock on the (edge_id, key)
// constraint: an edge created here has none yet. A missing container or field end gives no row
// for its edge (the caller compares the count and names the missing end); an external end is
// merged by fqn. Returns each created edge's row index `i`, id and how many evidence nodes it
// got, in row order.
UNWIND range(0, size($rows) - 1) AS i
WITH i, $first + i AS id, $rows[i] AS row
CALL (row) {
  MATCH (s:Container {id: row.source_id})
  WHERE row.source_kind = 'container'
  RETURN s
  UNION ALL
  MATCH (s:Field {id: row.source_id})
  WHERE row.source_kind = 'field'
  RETURN s
  UNION ALL
  WITH row
  WHERE row.source_kind = 'external'
  MERGE (s:External {fqn: row.source_fqn})
  RETURN s
}
CALL (row) {
  MATCH (t:Container {id: row.target_id})
  WHERE row.target_kind = 'container'
  RETURN t
  UNION ALL
  MATCH (t:Field {id: row.target_id})
  WHERE row.target_kind = 'field'
  RETURN t
  UNION ALL
  WITH row
  WHERE row.target_kind = 'external'
  MERGE (t:External {fqn: row.target_fqn})
  RETURN t
}
CREATE (s)-[r:LINEAGE]->(t)
SET r = row {.*, id: id}
WITH i, id
CALL (i, id) {
  UNWIND $evidence[i] AS ev
  CREATE (e:Evidence)
  SET e = ev {.*, edge_id: id}
  RETURN count(e) AS evidence
}
RETURN i, id, evidence
ORDER BY i
