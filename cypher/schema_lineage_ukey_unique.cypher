// Parameters: none. `ukey` is `<source key>|<target key>|<source type>`.
CREATE CONSTRAINT lineage_ukey_unique IF NOT EXISTS
FOR ()-[r:LINEAGE]-() REQUIRE r.ukey IS UNIQUE
