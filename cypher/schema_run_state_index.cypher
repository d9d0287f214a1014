// Parameters: none. Runs by state: the failed ones `run_failed_latest` starts from.
CREATE INDEX run_state IF NOT EXISTS
FOR (r:Run) ON (r.state)
