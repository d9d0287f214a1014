// Parameters: none. Whether anything but the id counters, identity documents and the schema version
// is stored (a first-start admin does not stop an import; imported documents replace it).
RETURN EXISTS { MATCH (n) WHERE NOT n:Counter AND NOT n:Doc AND NOT n:TributarySchema } AS has_data
