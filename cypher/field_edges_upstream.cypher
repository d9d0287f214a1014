// Parameters: $ids ([int], distinct): field ids. Live edges whose target is one of these (live)
// fields and whose source is a live field.
UNWIND $ids AS id
MATCH (t:Field {id: id})<-[r:LINEAGE]-(s:Field)
WHERE r.retired_at IS NULL
  AND NOT t.deleted
  AND NOT s.deleted
RETURN r {.*} AS edge
ORDER BY r.id
