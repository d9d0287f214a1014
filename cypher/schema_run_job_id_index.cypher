// Parameters: none. A job's runs (`run_of_job`).
CREATE INDEX run_job_id IF NOT EXISTS
FOR (r:Run) ON (r.job_id)
