// Parameters: $rows: [{owner: int (the run (by store id)), direction: 'read' | 'wrote', end_key: string
// (`End::key`), container_id: int or null, fqn: string or null (the end: a container, else an
// external asset), namespace, name: string (the dataset as sent), at: string (RFC 3339)}],
// (owner, direction, end_key) distinct.
// Upserts each dataset as a READ or WROTE relationship from the Run to the end's node, unique by
// its `end_key`. An external end is merged by fqn, as assert_edges_create does; a container
// end that is not stored (an import whose container was deleted before the export) gets a node
// marked deleted, as import_edges gives edges, so the entry keeps its end.
UNWIND $rows AS row
MATCH (o:Run {id: row.owner})
CALL (row) {
  WITH row
  WHERE row.container_id IS NOT NULL
  MERGE (x:Container {id: row.container_id})
  ON CREATE SET x.deleted = true
  RETURN x
  UNION ALL
  WITH row
  WHERE row.container_id IS NULL
  MERGE (x:External {fqn: row.fqn})
  RETURN x
}
CALL (o, x, row) {
  WITH o, x, row
  WHERE row.direction = 'read'
  MERGE (o)-[io:READ {end_key: row.end_key}]->(x)
  RETURN io
  UNION ALL
  WITH o, x, row
  WHERE row.direction = 'wrote'
  MERGE (o)-[io:WROTE {end_key: row.end_key}]->(x)
  RETURN io
}
SET io.container_id = row.container_id,
    io.fqn = row.fqn,
    io.namespace = row.namespace,
    io.name = row.name,
    io.at = row.at
RETURN count(io) AS written
