// Parameters: none. One id counter per kind (datastore, container, field, edge).
CREATE CONSTRAINT counter_name_unique IF NOT EXISTS
FOR (k:Counter) REQUIRE k.name IS UNIQUE
