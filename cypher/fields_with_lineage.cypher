// Parameters: $ids ([int], distinct). The live fields among them with a live edge.
UNWIND $ids AS id
MATCH (f:Field {id: id})
WHERE NOT f.deleted AND EXISTS { (f)-[r:LINEAGE]-() WHERE r.retired_at IS NULL }
RETURN f.id AS id
ORDER BY id
