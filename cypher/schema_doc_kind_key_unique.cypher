// Parameters: none. Users, tokens and teams are documents keyed by (kind, key).
CREATE CONSTRAINT doc_kind_key_unique IF NOT EXISTS
FOR (d:Doc) REQUIRE (d.kind, d.key) IS UNIQUE
