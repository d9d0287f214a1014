// Parameters: $kind, $key (string). The document's JSON text, or no row.
MATCH (d:Doc {kind: $kind, key: $key})
RETURN d.value AS value
