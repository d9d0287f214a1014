// Parameters: $ids ([int], distinct): field ids. Live edges whose source is one of these (live)
// fields and whose target is a live field.
UNWIND $ids AS id
MATCH (s:Field {id: id})-[r:LINEAGE]->(t:Field)
WHERE r.retired_at IS NULL
  AND NOT s.deleted
  AND NOT t.deleted
RETURN r {.*} AS edge
ORDER BY r.id
