// Parameters: $ids ([int], distinct): container ids. Live edges whose target is one of these
// (live) containers and whose source is a live container or an external asset.
UNWIND $ids AS id
MATCH (t:Container {id: id})<-[r:LINEAGE]-(s)
WHERE r.retired_at IS NULL
  AND NOT t.deleted
  AND (s:External OR (s:Container AND NOT s.deleted))
RETURN r {.*} AS edge
ORDER BY r.id
