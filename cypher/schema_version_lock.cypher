// Parameters: $assumed (the version of a database with no record). First statement of a migration
// step's transaction: takes the write lock on the version node (created when absent) and only then
// reads the version, so of two replicas migrating at once the second waits here and then finds the
// step done.
MERGE (s:TributarySchema {name: 'tributary'})
  ON CREATE SET s.version = $assumed
SET s._lock = true
WITH s, s.version AS version
REMOVE s._lock
RETURN version
