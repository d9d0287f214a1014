// Parameters: none.
CREATE INDEX field_container_id IF NOT EXISTS
FOR (f:Field) ON (f.container_id)
