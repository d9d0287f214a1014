// Parameters: $after, $before (string, RFC 3339, or null: eventTime >= $after and < $before,
// compared as text, as received_at is), $ascending (bool), $skip, $limit (int). Marquez's
// `/events/lineage`: the run events in the window by eventTime (then id), oldest or newest
// first, and the count of every event in it; rejected events and events without a time are
// not in it.
MATCH (e:Event)
WHERE e.event_time IS NOT NULL AND e.status <> 'rejected' AND e.kind = 'run_event'
  AND ($after IS NULL OR e.event_time >= $after)
  AND ($before IS NULL OR e.event_time < $before)
WITH e
ORDER BY CASE WHEN $ascending THEN e.event_time END ASC, CASE WHEN $ascending THEN e.id END ASC,
         CASE WHEN $ascending THEN null ELSE e.event_time END DESC, CASE WHEN $ascending THEN null ELSE e.id END DESC
SKIP $skip LIMIT $limit
WITH collect(e {.*}) AS items
CALL () {
  MATCH (e:Event)
  WHERE e.event_time IS NOT NULL AND e.status <> 'rejected'
    AND ($after IS NULL OR e.event_time >= $after)
    AND ($before IS NULL OR e.event_time < $before)
  RETURN count(e) AS total
}
RETURN items, total
