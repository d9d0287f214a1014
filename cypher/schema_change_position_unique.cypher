// Parameters: none. One change per position in the change log.
CREATE CONSTRAINT change_position_unique IF NOT EXISTS
FOR (c:Change) REQUIRE c.position IS UNIQUE
