// Parameters: $run_ids ([string], distinct). The runs whose parent run is one of $run_ids, by id.
MATCH (r:Run)
WHERE r.parent_run_id IN $run_ids
RETURN r {.*} AS run
ORDER BY r.id
