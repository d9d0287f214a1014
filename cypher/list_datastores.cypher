// Parameters: none.
MATCH (d:Datastore)
RETURN d {.*} AS datastore
ORDER BY d.id
