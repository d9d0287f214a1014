// Parameters: $kind, $key (string), $value (string: JSON). Creates or replaces the document.
MERGE (d:Doc {kind: $kind, key: $key})
SET d.value = $value
