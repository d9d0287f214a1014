// Parameters: none. A run's store id, from the `run` counter.
CREATE CONSTRAINT run_id_unique IF NOT EXISTS
FOR (r:Run) REQUIRE r.id IS UNIQUE
