// Parameters: $rows: [map of LINEAGE properties], as for create_edges. An end whose container or
// field is not in the catalog (it was deleted before the export) gets a node marked deleted and
// without key, so the edge keeps its end and the catalog stays as exported.
UNWIND $rows AS row
CALL (row) {
  WITH row
  WHERE row.source_kind = 'container'
  MERGE (s:Container {id: row.source_id})
  ON CREATE SET s.deleted = true
  RETURN s
  UNION ALL
  WITH row
  WHERE row.source_kind = 'field'
  MERGE (s:Field {id: row.source_id})
  ON CREATE SET s.deleted = true, s.container_id = row.source_container_id
  RETURN s
  UNION ALL
  WITH row
  WHERE row.source_kind = 'external'
  MERGE (s:External {fqn: row.source_fqn})
  RETURN s
}
CALL (row) {
  WITH row
  WHERE row.target_kind = 'container'
  MERGE (t:Container {id: row.target_id})
  ON CREATE SET t.deleted = true
  RETURN t
  UNION ALL
  WITH row
  WHERE row.target_kind = 'field'
  MERGE (t:Field {id: row.target_id})
  ON CREATE SET t.deleted = true, t.container_id = row.target_container_id
  RETURN t
  UNION ALL
  WITH row
  WHERE row.target_kind = 'external'
  MERGE (t:External {fqn: row.target_fqn})
  RETURN t
}
CREATE (s)-[r:LINEAGE]->(t)
SET r = row
RETURN count(r) AS created
