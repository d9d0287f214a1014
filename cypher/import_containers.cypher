// Parameters: $rows: [{id, datastore_id: int, key, name, name_lc (lowercased name): string, database, schema: string or null,
// container_type: string, table_type, display_name, purpose: string or null,
// active_anomaly_count: int, deleted: false}].
// Each hangs under its datastore (CONTAINS), imported before it.
UNWIND $rows AS row
CREATE (c:Container)
SET c = row
WITH c
MATCH (d:Datastore {id: c.datastore_id})
CREATE (d)-[:CONTAINS]->(c)
