// Parameters: $ids ([int], distinct). Live fields only, with the properties a record holds
// (not the key or the flag), as a list in the field order of `rows::FieldProps` (see containers_by_ids).
UNWIND $ids AS id
MATCH (f:Field {id: id})
WHERE NOT f.deleted
RETURN [f.id, f.container_id, f.name, f.display_name, f.data_type, f.status, f.latest_profile_id,
        coalesce(f.is_computed_field, false), coalesce(f.active_anomaly_count, 0)] AS field
ORDER BY f.id
