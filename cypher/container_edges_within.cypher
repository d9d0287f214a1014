// Parameters: $ids ([int], distinct): container ids. Live edges between two of these (live)
// containers. Each node's outgoing relationships are checked against the set; only the edges
// inside it are returned.
UNWIND $ids AS id
MATCH (s:Container {id: id})-[r:LINEAGE]->(t:Container)
WHERE r.retired_at IS NULL
  AND NOT s.deleted
  AND t.id IN $ids
  AND NOT t.deleted
RETURN r {.*} AS edge
ORDER BY r.id
