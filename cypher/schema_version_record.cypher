// Parameters: $version. Records the version a migration step reached, in the step's transaction.
MATCH (s:TributarySchema {name: 'tributary'})
SET s.version = $version
RETURN s.version AS version
