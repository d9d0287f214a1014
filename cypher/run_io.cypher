// Parameters: $ids ([int], distinct): runs' store ids. The datasets these runs read and wrote:
// each READ or WROTE relationship's properties with the run's id as `owner` and its
// `direction`, by owner, direction and end key.
UNWIND $ids AS id
MATCH (r:Run {id: id})-[io:READ|WROTE]->()
WITH io {.*, owner: r.id, direction: CASE type(io) WHEN 'READ' THEN 'read' ELSE 'wrote' END} AS entry
RETURN entry
ORDER BY entry.owner, entry.direction, entry.end_key
