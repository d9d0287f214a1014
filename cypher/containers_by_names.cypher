// Parameters: $names ([string]: names lowercased by the service), $datastore_ids ([int] or null:
// only these datastores). Live containers whose `name_lc` is one of the names, by id; an index
// seek per name.
UNWIND $names AS name
MATCH (c:Container {name_lc: name})
WHERE NOT c.deleted AND ($datastore_ids IS NULL OR c.datastore_id IN $datastore_ids)
WITH DISTINCT c
RETURN c {.*} AS container
ORDER BY c.id
