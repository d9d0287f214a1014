// Parameters: none. Every live field by id.
MATCH (f:Field)
WHERE NOT f.deleted
RETURN f {.*} AS field
ORDER BY f.id
