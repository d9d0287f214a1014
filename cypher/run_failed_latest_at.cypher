// Parameters: $at (string, RFC 3339), $limit (int). The runs in a failure state (FAIL, ABORT)
// that had ended by $at and were still their job's latest run then (no run of the job began
// after them by $at), the latest ended first: `run_failed_latest` at a past instant.
MATCH (r:Run)
WHERE r.state IN ['FAIL', 'ABORT'] AND r.ended_at <= $at
  AND NOT EXISTS {
    MATCH (n:Run {job_id: r.job_id})
    WHERE n.began <= $at AND (n.began > r.began OR (n.began = r.began AND n.id > r.id))
  }
RETURN r {.*} AS run
ORDER BY r.ended_at DESC, r.id DESC
LIMIT $limit
