// Parameters: $ids ([int], distinct): container ids. Every edge, live or retired, with an end on
// one of these containers or on one of their fields (deleted ones included).
UNWIND $ids AS id
CALL (id) {
  MATCH (:Container {id: id})-[r:LINEAGE]-()
  RETURN r
  UNION
  MATCH (:Field {container_id: id})-[r:LINEAGE]-()
  RETURN r
}
WITH DISTINCT r
RETURN r {.*} AS edge
ORDER BY r.id
