// Parameters: $pairs ([[int, int]], distinct): (source container id, target container id);
// $ids ([int], distinct): edge ids. Every edge, live or retired, from one of a pair's source
// container or its fields to the pair's target container or its fields, and the edges with
// these ids, each with every evidence row it has: what a session's assertion buffer
// (`store/neo4j/overlay.rs`) reads once for a chunk of OpenLineage events (the pairs its
// datasets' candidates make, the edges its jobs' live evidence is on) instead of an
// `overlay_lookup` per event. Each edge found is write-locked, as `overlay_lookup` locks it; a
// key no edge holds is not (a concurrent session creating it fails this one's commit, which the
// service then applies event by event). The pairs are sought in the `lineage_container_pair`
// index: one seek a pair, where matching the ends expanded every edge of a hub's fields.
CALL () {
  UNWIND $pairs AS p
  MATCH ()-[r:LINEAGE {source_container_id: p[0], target_container_id: p[1]}]->()
  RETURN r
  UNION
  UNWIND $ids AS id
  MATCH ()-[r:LINEAGE {id: id}]->()
  RETURN r
}
WITH DISTINCT r
SET r.locked = true
REMOVE r.locked
WITH r
OPTIONAL MATCH (e:Evidence {edge_id: r.id})
WITH r, collect(e {.*}) AS evidence
RETURN r {.*} AS edge, evidence
ORDER BY edge.id
