// Parameters: $name (string).
MATCH (d:Datastore {name: $name})
RETURN d.id AS id
