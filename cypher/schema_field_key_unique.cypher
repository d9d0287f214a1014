// Parameters: none. `key` is `<container id>/<name>`; removed when the field is deleted.
CREATE CONSTRAINT field_key_unique IF NOT EXISTS
FOR (f:Field) REQUIRE f.key IS UNIQUE
