// Parameters: $container_id (int). Every metadata node of the container and of its fields, by
// field_id (0, the container's own values, first), attribute, source.
MATCH (m:Metadata {container_id: $container_id})
RETURN m {.*} AS metadata
ORDER BY m.field_id, m.attribute, m.source
