// Parameters: $ids ([int], distinct). Live containers only.
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN c {.*} AS container
ORDER BY c.id
