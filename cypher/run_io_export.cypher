// Parameters: none. Every run dataset (as run_io), by owner, direction and end key.
MATCH (r:Run)-[io:READ|WROTE]->()
WITH io {.*, owner: r.id, direction: CASE type(io) WHEN 'READ' THEN 'read' ELSE 'wrote' END} AS entry
RETURN entry
ORDER BY entry.owner, entry.direction, entry.end_key
