// Parameters: none. A job's `Int` id, from the `job` counter.
CREATE CONSTRAINT job_id_unique IF NOT EXISTS
FOR (j:Job) REQUIRE j.id IS UNIQUE
