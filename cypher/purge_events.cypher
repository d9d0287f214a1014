// Parameters: $before (string, RFC 3339). Deletes the events received before it (text order is
// time order) and returns how many.
MATCH (e:Event)
WHERE e.received_at < $before
DELETE e
RETURN count(*) AS deleted
