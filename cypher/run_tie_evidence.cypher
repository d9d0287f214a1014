// Parameters: $rows: [{id: int (the run's store id), key: string (the evidence key its events
// assert under), needle: string (`"runId":` and the runId as JSON, the text the compact JSON of
// an evidence's details holds when this run asserted it last)}], in the order of the events.
// Ties the evidence each run asserted last to it: ASSERTED_BY from each evidence node of the key
// whose details name the run, moved from the run (or job) that asserted it before. The key's
// index finds the job's evidence; the details text picks the run's. An evidence node several
// rows pick goes to the last of them, as one statement per event in turn would leave it.
UNWIND range(0, size($rows) - 1) AS i
WITH i, $rows[i] AS row
MATCH (e:Evidence {key: row.key})
WHERE e.details CONTAINS row.needle
WITH e, max(i) AS last
WITH e, $rows[last] AS row
MATCH (r:Run {id: row.id})
CALL (e, r) {
  MATCH (e)-[old:ASSERTED_BY]->(o)
  WHERE o <> r
  DELETE old
}
MERGE (e)-[:ASSERTED_BY]->(r)
RETURN count(e) AS tied
