// Parameters: $names: [{namespace, name: string}] (every job a chunk of OpenLineage events names:
// their own, parents and roots; distinct, sorted), $own: [{namespace, name: string}] (the
// events' own jobs, distinct), $run_ids: [string] (the events' runIds, distinct, sorted).
// `job_record_lookup` for a whole chunk of events in one statement, before its first event is
// applied: the stored jobs of $names, the datasets of each stored job of $own, and each stored
// run of $run_ids with its datasets (each dataset a READS/WRITES or READ/WROTE relationship's
// properties with its `direction`, 'read' or 'wrote'). Locks as `job_record_lookup` does: in a
// writing statement Neo4j seeks the uniqueness constraints with locks, so each job's and run's
// key is locked whether a node holds it or not, and the found nodes are write-locked too
// (`locked` set and removed again); the sorted lists take the locks in one order.
CALL () {
  UNWIND $names AS n
  OPTIONAL MATCH (j:Job {namespace: n.namespace, name: n.name})
  FOREACH (x IN CASE WHEN j IS NULL THEN [] ELSE [j] END | SET x.locked = true REMOVE x.locked)
  RETURN collect(j {.*}) AS jobs
}
CALL () {
  UNWIND $run_ids AS run_id
  OPTIONAL MATCH (r:Run {run_id: run_id})
  FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END | SET x.locked = true REMOVE x.locked)
  WITH r WHERE r IS NOT NULL
  RETURN collect({
           run: r {.*},
           io: COLLECT {
             MATCH (r)-[io:READ|WROTE]->()
             RETURN io {.*, direction: CASE type(io) WHEN 'READ' THEN 'read' ELSE 'wrote' END}
           }
         }) AS runs
}
CALL () {
  UNWIND $own AS n
  MATCH (j:Job {namespace: n.namespace, name: n.name})
  RETURN collect({
           namespace: j.namespace,
           name: j.name,
           io: COLLECT {
             MATCH (j)-[io:READS|WRITES]->()
             RETURN io {.*, direction: CASE type(io) WHEN 'READS' THEN 'read' ELSE 'wrote' END}
           }
         }) AS job_io
}
RETURN jobs, runs, job_io
