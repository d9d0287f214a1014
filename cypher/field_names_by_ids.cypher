// Parameters: $ids ([int], distinct). Live fields only: container id, id and name, as a list in
// the field order of `rows::FieldNameProps` (what an answer showing only names needs).
UNWIND $ids AS id
MATCH (f:Field {id: id})
WHERE NOT f.deleted
RETURN [f.container_id, f.id, f.name] AS field
