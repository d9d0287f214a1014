// Parameters: none. A job's key: its OpenLineage namespace and name. `job_record_lookup` seeks it
// with locks, so two events of one job serialize on it even before the job exists.
CREATE CONSTRAINT job_name_unique IF NOT EXISTS
FOR (j:Job) REQUIRE (j.namespace, j.name) IS UNIQUE
