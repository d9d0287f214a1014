// Parameters: $rows: [map of LINEAGE properties as for create_edges.cypher, with their ids (taken
// from the store's blocks when the buffer met them)], in creation order; $evidence: [[evidence
// properties as for put_evidence]], the n-th list the n-th edge's evidence, keys distinct.
// A session's new edges, as its assertion buffer left them (`store/neo4j/overlay.rs`), with
// their evidence, in one statement. As `assert_edges_create`: a missing container or field end
// gives no row for its edge (the caller compares the count); an external end is merged by fqn.
UNWIND range(0, size($rows) - 1) AS i
WITH i, $rows[i] AS row
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
SET r = row
WITH i, r
CALL (i, r) {
  UNWIND $evidence[i] AS ev
  CREATE (e:Evidence)
  SET e = ev {.*, edge_id: r.id}
  RETURN count(e) AS evidence
}
RETURN i, r.id AS id
ORDER BY i
