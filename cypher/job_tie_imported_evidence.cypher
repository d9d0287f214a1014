// Parameters: $rows: [{edge_id: int, key: string, run_id: string or null (the details' runId),
// namespace, name: string or null (the details' job)}].
// After an import: each evidence node to the run its details name, or, with no run, to the job
// they name (the evidence of a job event), as record_run tied them.
UNWIND $rows AS row
MATCH (e:Evidence {edge_id: row.edge_id, key: row.key})
CALL (e, row) {
  WITH e, row
  WHERE row.run_id IS NOT NULL
  MATCH (r:Run {run_id: row.run_id})
  MERGE (e)-[:ASSERTED_BY]->(r)
}
CALL (e, row) {
  WITH e, row
  WHERE row.run_id IS NULL
  MATCH (j:Job {namespace: row.namespace, name: row.name})
  MERGE (e)-[:ASSERTED_BY]->(j)
}
RETURN count(e) AS tied
