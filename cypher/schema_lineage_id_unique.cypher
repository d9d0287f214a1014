// Parameters: none. Also the relationship index behind every lookup of an edge by id.
CREATE CONSTRAINT lineage_id_unique IF NOT EXISTS
FOR ()-[r:LINEAGE]-() REQUIRE r.id IS UNIQUE
