// Parameters: none.
CREATE CONSTRAINT datastore_name_unique IF NOT EXISTS
FOR (d:Datastore) REQUIRE d.name IS UNIQUE
