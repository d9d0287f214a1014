// Parameters: $rows: [{new: bool, run: {id: int, run_id: string, job_id: int, state: string,
// states: string (JSON: [[state, at], ...], by time), started_at, ended_at, nominal_start,
// nominal_end: string (RFC 3339) or null, error_message, error_language, parent_run_id: string or
// null, first_seen_at, last_seen_at, began: string (RFC 3339)}}].
// Creates the new runs (CREATE, as job_upsert does, for the same reason) and replaces every
// property of the others. Once all are written, each run gets its job's HAS_RUN, its CHILD_OF to
// its parent run when that run is stored, and a new run's children get theirs (a child run may
// arrive before its parent; once the parent is stored, a child links itself).
UNWIND $rows AS row
CALL (row) {
  WITH row
  WHERE row.new
  CREATE (r:Run)
  SET r = row.run
  RETURN r
  UNION ALL
  WITH row
  WHERE NOT row.new
  MATCH (r:Run {id: row.run.id})
  SET r = row.run
  RETURN r
}
WITH collect({r: r, new: row.new}) AS written
UNWIND written AS w
WITH w.r AS r, w.new AS new
CALL (r) {
  MATCH (j:Job {id: r.job_id})
  MERGE (j)-[:HAS_RUN]->(r)
}
CALL (r) {
  MATCH (r)-[old:CHILD_OF]->(p:Run)
  WHERE r.parent_run_id IS NULL OR p.run_id <> r.parent_run_id
  DELETE old
}
CALL (r) {
  MATCH (p:Run {run_id: r.parent_run_id})
  MERGE (r)-[:CHILD_OF]->(p)
}
CALL (r, new) {
  WITH r, new
  WHERE new
  MATCH (c:Run {parent_run_id: r.run_id})
  MERGE (c)-[:CHILD_OF]->(r)
}
RETURN count(r) AS written
