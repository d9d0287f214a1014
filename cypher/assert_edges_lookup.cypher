// Parameters: $ukeys ([string], distinct): `<source key>|<target key>|<source type>`.
// The edges, live or retired, already holding these keys. In a writing statement Neo4j seeks the
// ukey uniqueness constraint with locks, so every key is locked whether an edge holds it or not:
// another transaction creating or looking up the same key first makes this one wait until it
// ends, and then read what it committed. The found edges are write-locked too (`locked` is set
// and removed again), so their attributes stay ours until this transaction ends.
UNWIND $ukeys AS ukey
MATCH ()-[r:LINEAGE {ukey: ukey}]->()
SET r.locked = true
REMOVE r.locked
RETURN r {.*} AS edge
ORDER BY r.id
