// Parameters: $fqn: string (the external asset a dataset was recorded as), $container_id: int
// (the container it turned out to be), $to_key: string (`End::key` of that container).
// Moves every job's and run's dataset relationship (READ, WROTE, READS, WRITES) from the external
// asset to the container: a relationship of the same type and owner is merged there (created
// with the old one's properties, its end now the container's, unless the owner lists the
// container already) and the old one is removed. Returns how many moved or went.
MATCH (x:External {fqn: $fqn})<-[r:READ|WROTE|READS|WRITES]-(o)
MATCH (c:Container {id: $container_id})
CALL (o, r, c) {
  WITH o, r, c
  WHERE type(r) = 'READ'
  MERGE (o)-[n:READ {end_key: $to_key}]->(c)
  ON CREATE SET n += properties(r)
  RETURN n
  UNION ALL
  WITH o, r, c
  WHERE type(r) = 'WROTE'
  MERGE (o)-[n:WROTE {end_key: $to_key}]->(c)
  ON CREATE SET n += properties(r)
  RETURN n
  UNION ALL
  WITH o, r, c
  WHERE type(r) = 'READS'
  MERGE (o)-[n:READS {end_key: $to_key}]->(c)
  ON CREATE SET n += properties(r)
  RETURN n
  UNION ALL
  WITH o, r, c
  WHERE type(r) = 'WRITES'
  MERGE (o)-[n:WRITES {end_key: $to_key}]->(c)
  ON CREATE SET n += properties(r)
  RETURN n
}
SET n.end_key = $to_key, n.container_id = $container_id, n.fqn = null
DELETE r
RETURN count(r) AS moved
