// Parameters: $sources, $targets ([int], distinct): container ids. Live edges from one of
// $sources to one of $targets, both live containers: a lineage graph's edges that its traversal
// did not read. Each source's outgoing relationships are checked against $targets.
UNWIND $sources AS id
MATCH (s:Container {id: id})-[r:LINEAGE]->(t:Container)
WHERE r.retired_at IS NULL
  AND NOT s.deleted
  AND t.id IN $targets
  AND NOT t.deleted
RETURN r {.*} AS edge
ORDER BY r.id
