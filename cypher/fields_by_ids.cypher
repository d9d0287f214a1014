// Parameters: $ids ([int], distinct). Live fields only, with the properties a record holds
// (not the key or the flag).
UNWIND $ids AS id
MATCH (f:Field {id: id})
WHERE NOT f.deleted
RETURN f {.id, .container_id, .name, .display_name, .data_type, .status, .latest_profile_id,
          is_computed_field: coalesce(f.is_computed_field, false),
          active_anomaly_count: coalesce(f.active_anomaly_count, 0)} AS field
ORDER BY f.id
