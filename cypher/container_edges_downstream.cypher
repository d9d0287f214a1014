// Parameters: $ids ([int], distinct): container ids. Live edges whose source is one of these
// (live) containers and whose target is a live container or an external asset.
UNWIND $ids AS id
MATCH (s:Container {id: id})-[r:LINEAGE]->(t)
WHERE r.retired_at IS NULL
  AND NOT s.deleted
  AND (t:External OR (t:Container AND NOT t.deleted))
RETURN r {.*} AS edge
ORDER BY r.id
