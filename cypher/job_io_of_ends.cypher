// Parameters: $container_ids ([int]: the containers among the ends, a field end's container
// included), $fqns ([string]: the external assets), $keys ([string]: every end's `End::key`).
// The job datasets (as job_io) on these ends: which jobs read and write them, found from the end
// nodes, by owner, direction and end key.
CALL () {
  UNWIND $container_ids AS id
  MATCH (x:Container {id: id})
  RETURN x
  UNION
  UNWIND $fqns AS fqn
  MATCH (x:External {fqn: fqn})
  RETURN x
}
MATCH (j:Job)-[io:READS|WRITES]->(x)
WHERE io.end_key IN $keys
WITH io {.*, owner: j.id, direction: CASE type(io) WHEN 'READS' THEN 'read' ELSE 'wrote' END} AS entry
RETURN entry
ORDER BY entry.owner, entry.direction, entry.end_key
