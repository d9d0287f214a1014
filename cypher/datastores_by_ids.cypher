// Parameters: $ids ([int], distinct).
UNWIND $ids AS id
MATCH (d:Datastore {id: id})
RETURN d {.*} AS datastore
ORDER BY d.id
