// Parameters: $rows: [{name: string, count: int}], one row per counter, names distinct.
// Reserves `count` consecutive ids from each counter and returns the first id of each block.
// The right-hand side of SET reads the property it writes, so Cypher takes the node's write lock
// before reading it: concurrent transactions (or service replicas) never get the same block.
UNWIND $rows AS row
MERGE (k:Counter {name: row.name})
ON CREATE SET k.value = 0
SET k.value = k.value + row.count
RETURN row.name AS name, k.value - row.count + 1 AS first
