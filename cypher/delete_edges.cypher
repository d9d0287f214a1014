// Parameters: $ids ([int], distinct). Removes the edges and their evidence.
UNWIND $ids AS id
CALL (id) {
  MATCH ()-[r:LINEAGE {id: id}]->()
  DELETE r
}
CALL (id) {
  MATCH (e:Evidence {edge_id: id})
  DELETE e
}
