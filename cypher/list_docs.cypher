// Parameters: $kind (string). Every document of a kind, ordered by key.
MATCH (d:Doc {kind: $kind})
RETURN d.key AS key, d.value AS value
ORDER BY d.key
