// Parameters: $rows: [{job_id, run_id: int (store ids), at: string (RFC 3339: the run's end)}],
// in the order of `at` (then of the events).
// Each row a COMPLETE run: each of the job's written datasets that the run wrote (in any of its
// events) was last written completely by it, unless a later completion is already recorded.
// The rows come sorted by `at`, so where several runs completed a dataset the latest is kept
// however Neo4j interleaves the rows' reads and writes, as one statement per run in turn would.
UNWIND $rows AS row
MATCH (j:Job {id: row.job_id})-[io:WRITES]->(x)
WHERE (io.completed_at IS NULL OR io.completed_at <= row.at)
  AND EXISTS { MATCH (:Run {id: row.run_id})-[w:WROTE]->(x) WHERE w.end_key = io.end_key }
SET io.completed_run_id = row.run_id, io.completed_at = row.at
RETURN count(io) AS marked
