// Parameters: $ukeys ([string], distinct). The ones already held by an edge, live or retired.
UNWIND $ukeys AS ukey
MATCH ()-[r:LINEAGE {ukey: ukey}]->()
RETURN ukey
