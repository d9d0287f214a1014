// Parameters: $ukeys ([string], distinct): `<source key>|<target key>|<source type>`; $ids
// ([int], distinct): edge ids. The edges, live or retired, holding these keys or ids, each with
// every evidence row it has (live or retired): what a session's assertion buffer
// (`store/neo4j/overlay.rs`) must know of an edge to fold an event's assertions into it in
// memory. Locks as `assert_edges_lookup` does: every key is locked whether an edge holds it or
// not (the ukey constraint is sought in a writing statement), and each found edge is
// write-locked, so what the buffer holds stays true until the session ends.
CALL () {
  UNWIND $ukeys AS ukey
  MATCH ()-[r:LINEAGE {ukey: ukey}]->()
  RETURN collect(r) AS by_key
}
CALL () {
  UNWIND $ids AS id
  MATCH ()-[r:LINEAGE {id: id}]->()
  RETURN collect(r) AS by_id
}
UNWIND by_key + by_id AS r
WITH DISTINCT r
SET r.locked = true
REMOVE r.locked
WITH r
OPTIONAL MATCH (e:Evidence {edge_id: r.id})
WITH r, collect(e {.*}) AS evidence
RETURN r {.*} AS edge, evidence
ORDER BY edge.id
