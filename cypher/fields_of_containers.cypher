// Parameters: $ids ([int], distinct container ids). Every live field of those containers, by id:
// the OpenLineage resolver's field cache for one event, in one statement.
UNWIND $ids AS cid
MATCH (f:Field {container_id: cid})
WHERE NOT f.deleted
RETURN f {.*} AS field
ORDER BY f.id
