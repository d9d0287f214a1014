// Parameters: none. The one schema-version node: unique, so replicas starting at once that MERGE
// it find the same node (and lock it) instead of creating one each.
CREATE CONSTRAINT tributary_schema_name_unique IF NOT EXISTS
FOR (s:TributarySchema) REQUIRE s.name IS UNIQUE
