// Parameters: none.
CREATE CONSTRAINT external_fqn_unique IF NOT EXISTS
FOR (x:External) REQUIRE x.fqn IS UNIQUE
