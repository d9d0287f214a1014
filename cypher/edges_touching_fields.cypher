// Parameters: $ids ([int], distinct): field ids. Every edge, live or retired, with an end on one
// of these fields.
UNWIND $ids AS id
MATCH (:Field {id: id})-[r:LINEAGE]-()
WITH DISTINCT r
RETURN r {.*} AS edge
ORDER BY r.id
