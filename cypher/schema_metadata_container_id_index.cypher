// Parameters: none.
CREATE INDEX metadata_container_id IF NOT EXISTS
FOR (m:Metadata) ON (m.container_id)
