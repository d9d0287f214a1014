// Parameters: none. Every edge, live or retired, by id.
MATCH ()-[r:LINEAGE]->()
RETURN r {.*} AS edge
ORDER BY r.id
