// Parameters: $ids ([int], distinct): field ids. Field-level edges in any state (live or retired,
// deleted ends included) whose source is one of these fields.
UNWIND $ids AS id
MATCH (s:Field {id: id})-[r:LINEAGE]->(t:Field)
RETURN r {.*} AS edge
ORDER BY r.id
