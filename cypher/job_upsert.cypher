// Parameters: $rows: [{new: bool, job: {id: int, namespace, name, name_lc (name lowercased by
// the service): string, processing_type, integration, job_type, description: string or null,
// owners: [string], source_code_location, sql: string or null, parent_id, root_id: int or null,
// first_seen_at, last_seen_at: string (RFC 3339), latest_run_id: int or null, latest_run_began:
// string or null}}].
// Creates the new jobs and replaces every property of the others (`SET j = row.job`: an absent
// value is removed). New ones are CREATEd, not merged: should a concurrent transaction have
// created one meanwhile, the uniqueness constraint refuses it and the caller runs again, finding
// it. Once all are written (the `collect` waits for every row), each job's CHILD_OF goes to its
// parent, and a new job's children get theirs: an import may write a child before its parent
// (record_run writes a parent first, so for a job already stored its children are linked).
UNWIND $rows AS row
CALL (row) {
  WITH row
  WHERE row.new
  CREATE (j:Job)
  SET j = row.job
  RETURN j
  UNION ALL
  WITH row
  WHERE NOT row.new
  MATCH (j:Job {id: row.job.id})
  SET j = row.job
  RETURN j
}
WITH collect({j: j, new: row.new}) AS written
UNWIND written AS w
WITH w.j AS j, w.new AS new
CALL (j) {
  MATCH (j)-[old:CHILD_OF]->(p:Job)
  WHERE j.parent_id IS NULL OR p.id <> j.parent_id
  DELETE old
}
CALL (j) {
  MATCH (p:Job {id: j.parent_id})
  MERGE (j)-[:CHILD_OF]->(p)
}
CALL (j, new) {
  WITH j, new
  WHERE new
  MATCH (c:Job {parent_id: j.id})
  MERGE (c)-[:CHILD_OF]->(j)
}
RETURN count(j) AS written
