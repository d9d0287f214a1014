// Parameters: $ids ([int], distinct). Live containers only, with the properties a record
// holds (not the search key or the flag).
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN c {.id, .datastore_id, .name, .database, .schema, .container_type, .table_type, .display_name,
          .purpose, active_anomaly_count: coalesce(c.active_anomaly_count, 0)} AS container
ORDER BY c.id
