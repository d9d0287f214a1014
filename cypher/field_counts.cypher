// Parameters: $ids ([int], distinct). Per live container with live fields: how many.
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
WITH c, COUNT { MATCH (f:Field {container_id: c.id}) WHERE NOT f.deleted } AS field_count
WHERE field_count > 0
RETURN c.id AS container_id, field_count
ORDER BY container_id
