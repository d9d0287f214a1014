// Parameters: none.
CREATE INDEX evidence_edge_id IF NOT EXISTS
FOR (e:Evidence) ON (e.edge_id)
