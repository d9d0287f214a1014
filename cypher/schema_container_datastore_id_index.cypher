// Parameters: none.
CREATE INDEX container_datastore_id IF NOT EXISTS
FOR (c:Container) ON (c.datastore_id)
