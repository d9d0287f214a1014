// Parameters: $ids ([int], distinct): container ids; $known ([int]): ids of edges to external
// assets that the answer already holds; $up, $down ([int]): the ids to check upstream and
// downstream (the others' edges that way were all read by the traversal). Per live container:
// whether a live edge joins it to a live container outside $ids or to an external asset by an
// edge not in $known, upstream and downstream. EXISTS stops at the first such edge, so a hub's
// fan-out is not read in full. CASE, so a side not asked is not looked at.
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN c.id AS id,
       CASE WHEN id IN $up THEN EXISTS {
         MATCH (c)<-[r:LINEAGE]-(s)
         WHERE r.retired_at IS NULL
           AND ((s:Container AND NOT s.deleted AND NOT s.id IN $ids) OR (s:External AND NOT r.id IN $known))
       } ELSE false END AS has_upstream,
       CASE WHEN id IN $down THEN EXISTS {
         MATCH (c)-[r:LINEAGE]->(t)
         WHERE r.retired_at IS NULL
           AND ((t:Container AND NOT t.deleted AND NOT t.id IN $ids) OR (t:External AND NOT r.id IN $known))
       } ELSE false END AS has_downstream
