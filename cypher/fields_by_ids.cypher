// Parameters: $ids ([int], distinct). Live fields only.
UNWIND $ids AS id
MATCH (f:Field {id: id})
WHERE NOT f.deleted
RETURN f {.*} AS field
ORDER BY f.id
