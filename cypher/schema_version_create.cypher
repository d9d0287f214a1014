// Parameters: $version. Records the version of a new database; returns the version recorded, which
// is another's when a replica started at the same moment recorded first.
MERGE (s:TributarySchema {name: 'tributary'})
  ON CREATE SET s.version = $version
RETURN s.version AS version
