// Parameters: $ids ([int], distinct). Live containers only, with the properties a record
// holds (not the search key or the flag), as a list in the field order of `rows::ContainerProps`: this
// read answers every node of a large graph, and a list decodes cheaper than a map.
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN [c.id, c.datastore_id, c.name, c.database, c.schema, c.container_type, c.table_type, c.display_name,
        c.purpose, coalesce(c.active_anomaly_count, 0)] AS container
ORDER BY c.id
