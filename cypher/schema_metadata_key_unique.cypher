// Parameters: none. One metadata node per (container_id, field_id, attribute, source); field_id
// is 0 for the container's own values.
CREATE CONSTRAINT metadata_key_unique IF NOT EXISTS
FOR (m:Metadata) REQUIRE (m.container_id, m.field_id, m.attribute, m.source) IS UNIQUE
