// Parameters: none. A run's OpenLineage `runId`, its key.
CREATE CONSTRAINT run_run_id_unique IF NOT EXISTS
FOR (r:Run) REQUIRE r.run_id IS UNIQUE
