// Parameters: $ids ([int], distinct container ids). The containers' own metadata nodes (field_id
// 0; not their fields'), every source's, by container, attribute, source: what a container's
// effective description, owners and tags are chosen from.
UNWIND $ids AS cid
MATCH (m:Metadata {container_id: cid, field_id: 0})
RETURN m {.*} AS metadata
ORDER BY m.container_id, m.attribute, m.source
