// Parameters: $rows: [{kind, key, value (string: JSON)}]. A document that exists is replaced.
UNWIND $rows AS row
MERGE (d:Doc {kind: row.kind, key: row.key})
SET d.value = row.value
