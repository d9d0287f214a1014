// Parameters: none. Every run by id.
MATCH (r:Run)
RETURN r {.*} AS run
ORDER BY r.id
