// Parameters: $ids ([int], distinct). Live containers only: id and name, as a list in the field
// order of `rows::ContainerNameProps` (what an answer showing only names needs).
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN [c.id, c.name] AS container
