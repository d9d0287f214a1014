// Parameters: none. Every event by id.
MATCH (e:Event)
RETURN e {.*} AS event
ORDER BY e.id
