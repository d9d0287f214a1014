// Parameters: $ids ([int], distinct): field ids. Field-level edges in any state (live or retired,
// deleted ends included) whose target is one of these fields.
UNWIND $ids AS id
MATCH (t:Field {id: id})<-[r:LINEAGE]-(s:Field)
RETURN r {.*} AS edge
ORDER BY r.id
