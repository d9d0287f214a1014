// Parameters: $run_ids ([string], distinct): OpenLineage runIds.
UNWIND $run_ids AS run_id
MATCH (r:Run {run_id: run_id})
RETURN r {.*} AS run
ORDER BY r.id
