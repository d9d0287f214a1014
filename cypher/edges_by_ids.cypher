// Parameters: $ids ([int], distinct). Live and retired edges.
UNWIND $ids AS id
MATCH ()-[r:LINEAGE {id: id}]->()
RETURN r {.*} AS edge
ORDER BY r.id
