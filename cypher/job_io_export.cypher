// Parameters: none. Every job dataset (as job_io), by owner, direction and end key.
MATCH (j:Job)-[io:READS|WRITES]->()
WITH io {.*, owner: j.id, direction: CASE type(io) WHEN 'READS' THEN 'read' ELSE 'wrote' END} AS entry
RETURN entry
ORDER BY entry.owner, entry.direction, entry.end_key
