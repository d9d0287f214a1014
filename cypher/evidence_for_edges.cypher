// Parameters: $ids ([int], distinct): edge ids.
UNWIND $ids AS id
MATCH (e:Evidence {edge_id: id})
RETURN e {.*} AS evidence
ORDER BY e.edge_id, e.key
