// Parameters: none. The highest position in the change log, 0 when it is empty.
OPTIONAL MATCH (c:Change)
RETURN coalesce(max(c.position), 0) AS position
