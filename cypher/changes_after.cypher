// Parameters: $after (int), $first (int). The first changes above position $after, in order.
MATCH (c:Change)
WHERE c.position > $after
RETURN c {.*} AS change
ORDER BY c.position
LIMIT $first
