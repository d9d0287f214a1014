// Parameters: $ids ([int], distinct): container ids; $known ([int]): ids of edges to external
// assets that the answer already holds. Per live container: whether a live edge joins it to a
// live container outside $ids or to an external asset by an edge not in $known, upstream and
// downstream. EXISTS stops at the first such edge, so a hub's fan-out is not read in full.
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN c.id AS id,
       EXISTS {
         MATCH (c)<-[r:LINEAGE]-(s)
         WHERE r.retired_at IS NULL
           AND ((s:Container AND NOT s.deleted AND NOT s.id IN $ids) OR (s:External AND NOT r.id IN $known))
       } AS has_upstream,
       EXISTS {
         MATCH (c)-[r:LINEAGE]->(t)
         WHERE r.retired_at IS NULL
           AND ((t:Container AND NOT t.deleted AND NOT t.id IN $ids) OR (t:External AND NOT r.id IN $known))
       } AS has_downstream
