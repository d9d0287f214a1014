// Parameters: $since, $until (string, RFC 3339, or null: bounds on when the run ended), $limit
// (int). The runs in a failure state (FAIL, ABORT) that are still their job's latest run, the
// latest ended first. Starts from the failed runs (the state index), fewer than the jobs.
MATCH (r:Run)
WHERE r.state IN ['FAIL', 'ABORT']
  AND ($since IS NULL OR r.ended_at >= $since)
  AND ($until IS NULL OR r.ended_at <= $until)
  AND EXISTS { MATCH (j:Job {id: r.job_id}) WHERE j.latest_run_id = r.id }
RETURN r {.*} AS run
ORDER BY r.ended_at DESC, r.id DESC
LIMIT $limit
