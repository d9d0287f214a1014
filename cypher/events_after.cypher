// Parameters: $after (int), $limit (int, >= 0). Events with a higher id, oldest first.
MATCH (e:Event)
WHERE e.id > $after
RETURN e {.*} AS event
ORDER BY e.id
LIMIT $limit
