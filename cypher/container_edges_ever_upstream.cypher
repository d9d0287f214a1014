// Parameters: $ids ([int], distinct): container ids. Container-level edges in any state (live or
// retired, deleted ends included) whose target is one of these containers and whose source is a
// container or an external asset: what a traversal as of a past time reads.
UNWIND $ids AS id
MATCH (t:Container {id: id})<-[r:LINEAGE]-(s)
WHERE s:External OR s:Container
RETURN r {.*} AS edge
ORDER BY r.id
