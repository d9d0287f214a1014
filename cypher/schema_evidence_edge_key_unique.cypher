// Parameters: none. One evidence node per (edge id, key).
CREATE CONSTRAINT evidence_edge_key_unique IF NOT EXISTS
FOR (e:Evidence) REQUIRE (e.edge_id, e.key) IS UNIQUE
