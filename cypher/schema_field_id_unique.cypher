// Parameters: none. Also the index behind every lookup of a field by id.
CREATE CONSTRAINT field_id_unique IF NOT EXISTS
FOR (f:Field) REQUIRE f.id IS UNIQUE
