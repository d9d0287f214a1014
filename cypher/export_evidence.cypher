// Parameters: none. Every evidence node by (edge_id, key).
MATCH (e:Evidence)
RETURN e {.*} AS evidence
ORDER BY e.edge_id, e.key
