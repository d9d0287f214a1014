// Parameters: none. Jobs by parent (`job_children`, and the CHILD_OF wiring of `job_upsert`).
CREATE INDEX job_parent_id IF NOT EXISTS
FOR (j:Job) ON (j.parent_id)
