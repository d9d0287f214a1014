// Parameters: none.
CREATE CONSTRAINT datastore_id_unique IF NOT EXISTS
FOR (d:Datastore) REQUIRE d.id IS UNIQUE
