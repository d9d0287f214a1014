// Parameters: none. The recorded schema version (null when none is recorded) and whether the
// database holds anything else: no record and no data is a new database, no record with data one
// written before versions were recorded (version 1).
OPTIONAL MATCH (s:TributarySchema {name: 'tributary'})
RETURN s.version AS version, EXISTS { MATCH (n) WHERE NOT n:TributarySchema } AS has_data
