// Parameters: none. Every metadata node by (container_id, field_id, attribute, source), the
// embedded store's order.
MATCH (m:Metadata)
RETURN m {.*} AS metadata
ORDER BY m.container_id, m.field_id, m.attribute, m.source
