// Parameters: $ids ([int], distinct): container ids. Container-level edges in any state (live or
// retired, deleted ends included) whose source is one of these containers and whose target is a
// container or an external asset: what a traversal as of a past time reads.
UNWIND $ids AS id
MATCH (s:Container {id: id})-[r:LINEAGE]->(t)
WHERE t:External OR t:Container
RETURN r {.*} AS edge
ORDER BY r.id
