// Parameters: none. Every live container by id.
MATCH (c:Container)
WHERE NOT c.deleted
RETURN c {.*} AS container
ORDER BY c.id
