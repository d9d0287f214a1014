// Parameters: $ids ([int], distinct). The datasets these jobs read and wrote: each READS or
// WRITES relationship's properties with the job's id as `owner` and its `direction` ('read',
// 'wrote'), by owner, direction and end key (the embedded store's order).
UNWIND $ids AS id
MATCH (j:Job {id: id})-[io:READS|WRITES]->()
WITH io {.*, owner: j.id, direction: CASE type(io) WHEN 'READS' THEN 'read' ELSE 'wrote' END} AS entry
RETURN entry
ORDER BY entry.owner, entry.direction, entry.end_key
