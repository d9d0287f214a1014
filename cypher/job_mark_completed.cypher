// Parameters: $job_id, $run_id (int: store ids), $at (string, RFC 3339: the run's end).
// A COMPLETE run: each of the job's written datasets that the run wrote (in any of its events)
// was last written completely by it, unless a later completion is already recorded.
MATCH (j:Job {id: $job_id})-[io:WRITES]->(x)
WHERE (io.completed_at IS NULL OR io.completed_at <= $at)
  AND EXISTS { MATCH (:Run {id: $run_id})-[w:WROTE]->(x) WHERE w.end_key = io.end_key }
SET io.completed_run_id = $run_id, io.completed_at = $at
RETURN count(io) AS marked
