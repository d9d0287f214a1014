// Parameters: $keys ([string], distinct). Evidence, live or retired, with one of these keys.
UNWIND $keys AS key
MATCH (e:Evidence {key: key})
RETURN e {.*} AS evidence
ORDER BY e.edge_id, e.key
