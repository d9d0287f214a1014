// Parameters: $rows: [map of LINEAGE properties]: id, ukey, created, description, source_type,
// operation, derived, transformations (JSON string), last_asserted_at, retired_at, intervals (JSON
// string), and per end (source_*, target_*): kind ('container' | 'field' | 'external'), id,
// container_id, fqn. A missing container or field end gives no row for its edge (callers compare
// the count and name the missing end); an external end is
// merged by fqn. Returns the created edges by id.
UNWIND $rows AS row
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
RETURN r {.*} AS edge
ORDER BY r.id
