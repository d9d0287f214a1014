// Parameters: none. `key` is `<datastore id>/<database.schema.name>`; a deleted container has no
// key, so the constraint ignores it and the key can be reused.
CREATE CONSTRAINT container_key_unique IF NOT EXISTS
FOR (c:Container) REQUIRE c.key IS UNIQUE
