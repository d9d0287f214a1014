// Parameters: $rows: [{id, container_id: int, key, name: string, display_name, data_type: string
// or null, status: string, latest_profile_id: int or null, is_computed_field: bool,
// active_anomaly_count: int, deleted: false}].
// Each hangs under its container (HAS_FIELD), imported before it.
UNWIND $rows AS row
CREATE (f:Field)
SET f = row
WITH f
MATCH (c:Container {id: f.container_id})
CREATE (c)-[:HAS_FIELD]->(f)
