// Parameters: $status, $job_namespace, $job_name, $run_id (string or null: equal to), $since,
// $until (string, RFC 3339, or null: bounds on received_at, inclusive, compared as text),
// $reason (string or null: the stored summary contains it, an ignored event's
// `"ignored_reason":"..."`), $skip, $limit (int). One page of events, newest (highest id) first,
// and the total.
MATCH (e:Event)
WHERE ($status IS NULL OR e.status = $status)
  AND ($job_namespace IS NULL OR e.job_namespace = $job_namespace)
  AND ($job_name IS NULL OR e.job_name = $job_name)
  AND ($run_id IS NULL OR e.run_id = $run_id)
  AND ($since IS NULL OR e.received_at >= $since)
  AND ($until IS NULL OR e.received_at <= $until)
  AND ($reason IS NULL OR e.summary CONTAINS $reason)
WITH e ORDER BY e.id DESC SKIP $skip LIMIT $limit
WITH collect(e {.*}) AS items
CALL () {
  MATCH (e:Event)
  WHERE ($status IS NULL OR e.status = $status)
    AND ($job_namespace IS NULL OR e.job_namespace = $job_namespace)
    AND ($job_name IS NULL OR e.job_name = $job_name)
    AND ($run_id IS NULL OR e.run_id = $run_id)
    AND ($since IS NULL OR e.received_at >= $since)
    AND ($until IS NULL OR e.received_at <= $until)
    AND ($reason IS NULL OR e.summary CONTAINS $reason)
  RETURN count(e) AS total
}
RETURN items, total
