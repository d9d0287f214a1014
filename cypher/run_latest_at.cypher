// Parameters: $ids (list of job ids), $at (string, RFC 3339). Each job's latest run as of $at:
// the one that began last at or before it (by `began`, then id), through the `job_id` index.
UNWIND $ids AS job_id
CALL (job_id) {
  MATCH (r:Run {job_id: job_id})
  WHERE r.began <= $at
  RETURN r ORDER BY r.began DESC, r.id DESC LIMIT 1
}
RETURN r {.*} AS run
ORDER BY r.id
