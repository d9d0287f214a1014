// Parameters: as list_events.cypher, with $run_id a string (not null). The same page, found
// through the run-id index: the generic statement's `$run_id IS NULL OR ...` cannot use it, and
// ingest asks for a run's events at every START.
MATCH (e:Event {run_id: $run_id})
WHERE ($status IS NULL OR e.status = $status)
  AND ($job_namespace IS NULL OR e.job_namespace = $job_namespace)
  AND ($job_name IS NULL OR e.job_name = $job_name)
  AND ($since IS NULL OR e.received_at >= $since)
  AND ($until IS NULL OR e.received_at <= $until)
  AND ($reason IS NULL OR e.summary CONTAINS $reason)
WITH e ORDER BY e.id DESC SKIP $skip LIMIT $limit
WITH collect(e {.*}) AS items
CALL () {
  MATCH (e:Event {run_id: $run_id})
  WHERE ($status IS NULL OR e.status = $status)
    AND ($job_namespace IS NULL OR e.job_namespace = $job_namespace)
    AND ($job_name IS NULL OR e.job_name = $job_name)
    AND ($since IS NULL OR e.received_at >= $since)
    AND ($until IS NULL OR e.received_at <= $until)
    AND ($reason IS NULL OR e.summary CONTAINS $reason)
  RETURN count(e) AS total
}
RETURN items, total
