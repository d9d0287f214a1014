// Parameters: none. Runs by parent run (`run_children`, and the CHILD_OF wiring of `run_upsert`).
CREATE INDEX run_parent_run_id IF NOT EXISTS
FOR (r:Run) ON (r.parent_run_id)
