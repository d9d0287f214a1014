// Parameters: $id (int: the run's store id), $key (string: the evidence key its events assert
// under), $needle (string: `"runId":` and the runId as JSON, the text the compact JSON of an
// evidence's details holds when this run asserted it last).
// Ties the evidence this run asserted last to it: ASSERTED_BY from each evidence node of the key
// whose details name the run, moved from the run (or job) that asserted it before. The key's
// index finds the job's evidence; the details text picks the run's.
MATCH (r:Run {id: $id})
MATCH (e:Evidence {key: $key})
WHERE e.details CONTAINS $needle
CALL (e, r) {
  MATCH (e)-[old:ASSERTED_BY]->(o)
  WHERE o <> r
  DELETE old
}
MERGE (e)-[:ASSERTED_BY]->(r)
RETURN count(e) AS tied
