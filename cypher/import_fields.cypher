// Parameters: $rows: [{id, container_id: int, key, name: string, display_name, data_type: string
// or null, status: string, latest_profile_id: int or null, is_computed_field: bool,
// active_anomaly_count: int, deleted: false}].
UNWIND $rows AS row
CREATE (f:Field)
SET f = row
