// Parameters: $before (string, RFC 3339). Deletes the changes recorded before it (text order is
// time order) and returns how many.
MATCH (c:Change)
WHERE c.at < $before
DELETE c
RETURN count(*) AS deleted
