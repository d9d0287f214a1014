// Parameters: $rows: [{owner: int (the job), direction: 'read' | 'wrote', end_key: string
// (`End::key`), container_id: int or null, fqn: string or null (the end: a container, else an
// external asset), namespace, name: string (the dataset as sent), at: string (RFC 3339), completed_run_id: int or null,
// completed_at: string or null (the latest COMPLETE run that wrote it, and its end)}],
// (owner, direction, end_key) distinct.
// Upserts each dataset as a READS or WRITES relationship from the Job to the end's node, unique by
// its `end_key`. An external end is merged by fqn, as assert_edges_create does; a container
// end that is not stored (an import whose container was deleted before the export) gets a node
// marked deleted, as import_edges gives edges, so the entry keeps its end.
UNWIND $rows AS row
MATCH (o:Job {id: row.owner})
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
  MERGE (o)-[io:READS {end_key: row.end_key}]->(x)
  RETURN io
  UNION ALL
  WITH o, x, row
  WHERE row.direction = 'wrote'
  MERGE (o)-[io:WRITES {end_key: row.end_key}]->(x)
  RETURN io
}
SET io.container_id = row.container_id,
    io.fqn = row.fqn,
    io.namespace = row.namespace,
    io.name = row.name,
    io.at = row.at
SET io.completed_run_id = coalesce(row.completed_run_id, io.completed_run_id),
    io.completed_at = coalesce(row.completed_at, io.completed_at)
RETURN count(io) AS written
