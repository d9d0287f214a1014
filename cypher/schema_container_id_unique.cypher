// Parameters: none. Also the index behind every lookup of a container by id.
CREATE CONSTRAINT container_id_unique IF NOT EXISTS
FOR (c:Container) REQUIRE c.id IS UNIQUE
