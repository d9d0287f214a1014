// Parameters: $ukeys ([string], distinct): `<source key>|<target key>|<source type>`.
// The edges, live or retired, already holding these keys, write-locked first (the `locked`
// property is set and removed again) so their attributes are read after any concurrent
// apply_assertions touching them has committed, and stay ours until this transaction ends.
UNWIND $ukeys AS ukey
MATCH ()-[r:LINEAGE {ukey: ukey}]->()
SET r.locked = true
REMOVE r.locked
RETURN r {.*} AS edge
ORDER BY r.id
