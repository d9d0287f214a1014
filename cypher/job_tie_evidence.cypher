// Parameters: $id (int: the job's id), $key (string: the evidence key of its job events).
// A job event (no run): every evidence node of its key was asserted by the job; ASSERTED_BY from
// each to it, moved from whatever it pointed to before.
MATCH (j:Job {id: $id})
MATCH (e:Evidence {key: $key})
CALL (e, j) {
  MATCH (e)-[old:ASSERTED_BY]->(o)
  WHERE o <> j
  DELETE old
}
MERGE (e)-[:ASSERTED_BY]->(j)
RETURN count(e) AS tied
