// Parameters: $rows: [{id: int (the job's id), key: string (the evidence key of its job
// events)}], in the order of the events.
// Each row a job event (no run): every evidence node of its key was asserted by the job;
// ASSERTED_BY from each to it, moved from whatever it pointed to before (to the last row's job
// where several rows name the key).
UNWIND range(0, size($rows) - 1) AS i
WITH i, $rows[i] AS row
MATCH (e:Evidence {key: row.key})
WITH e, max(i) AS last
WITH e, $rows[last] AS row
MATCH (j:Job {id: row.id})
CALL (e, j) {
  MATCH (e)-[old:ASSERTED_BY]->(o)
  WHERE o <> j
  DELETE old
}
MERGE (e)-[:ASSERTED_BY]->(j)
RETURN count(e) AS tied
