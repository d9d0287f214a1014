// Parameters: $names: [{namespace, name: string}] (the event's parent and root jobs and the job
// itself, distinct), $namespace, $name (string: the event's job), $run_id (string or null: the
// event's runId).
// What `record_run` folds an event into: the stored jobs of $names, the event's job's datasets,
// the run and its datasets (each dataset a READS/WRITES or READ/WROTE relationship's properties
// with its `direction`, 'read' or 'wrote'). In a writing statement Neo4j seeks the uniqueness
// constraints with locks, so each job's and the run's key is locked whether a node holds it or
// not: a concurrent event of the same job waits for this transaction and then reads what it
// committed. The found nodes are write-locked too (`locked` set and removed again).
CALL () {
  UNWIND $names AS n
  OPTIONAL MATCH (j:Job {namespace: n.namespace, name: n.name})
  FOREACH (x IN CASE WHEN j IS NULL THEN [] ELSE [j] END | SET x.locked = true REMOVE x.locked)
  RETURN collect(j {.*}) AS jobs
}
OPTIONAL MATCH (r:Run {run_id: $run_id})
FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END | SET x.locked = true REMOVE x.locked)
RETURN jobs,
       r {.*} AS run,
       COLLECT {
         MATCH (:Job {namespace: $namespace, name: $name})-[io:READS|WRITES]->()
         RETURN io {.*, direction: CASE type(io) WHEN 'READS' THEN 'read' ELSE 'wrote' END}
       } AS job_io,
       COLLECT {
         MATCH (r)-[io:READ|WROTE]->()
         RETURN io {.*, direction: CASE type(io) WHEN 'READ' THEN 'read' ELSE 'wrote' END}
       } AS run_io
