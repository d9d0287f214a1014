// Parameters: $rows: [evidence properties as for put_evidence], (edge_id, key) distinct.
// A session's evidence rows of stored edges as its assertion buffer left them (asserted live,
// or retired: `store/neo4j/overlay.rs`, which merged the operations that first and last observed
// them in memory), in one statement.
UNWIND $rows AS row
MERGE (e:Evidence {edge_id: row.edge_id, key: row.key})
SET e = row
RETURN count(e) AS written
