// Parameters: $job_id (int), $state (string or null), $since, $until (string, RFC 3339, or null:
// bounds on when the run began), $skip, $limit (int). One page of the job's runs, the latest
// first (by `began`, then id), and the total.
MATCH (r:Run {job_id: $job_id})
WHERE ($state IS NULL OR r.state = $state)
  AND ($since IS NULL OR r.began >= $since)
  AND ($until IS NULL OR r.began <= $until)
WITH r ORDER BY r.began DESC, r.id DESC SKIP $skip LIMIT $limit
WITH collect(r {.*}) AS items
CALL () {
  MATCH (r:Run {job_id: $job_id})
  WHERE ($state IS NULL OR r.state = $state)
    AND ($since IS NULL OR r.began >= $since)
    AND ($until IS NULL OR r.began <= $until)
  RETURN count(r) AS total
}
RETURN items, total
