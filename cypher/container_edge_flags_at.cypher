// Parameters: $ids ([int], distinct): container ids; $known ([int]): ids of edges to external
// assets that the answer already holds; $up, $down ([int]): the ids to check upstream and
// downstream; $at ([string], one instant). container_edge_flags as of the instant: per
// container (deleted or not), whether an edge live then joins it to a container outside $ids
// (deleted or not) or to an external asset by an edge not in $known, upstream and downstream.
// EXISTS stops at the first such edge.
// Live at one of $at ([string]: instants as the store writes timestamps, 27 characters) is
// domain::live_at spelled in Cypher: inside one of the intervals (a JSON list of
// {"from":"<ts>","to":null|"<ts>"} written by rows::intervals_text, each timestamp 27
// characters, so they are cut out of the text and compared as text), or, with none recorded,
// from created while unretired.
UNWIND $ids AS id
MATCH (c:Container {id: id})
RETURN c.id AS id,
       CASE WHEN id IN $up THEN EXISTS {
         MATCH (c)<-[r:LINEAGE]-(n)
         WHERE ((n:Container AND NOT n.id IN $ids) OR (n:External AND NOT r.id IN $known))
           AND any(t IN $at WHERE CASE WHEN coalesce(r.intervals, '[]') = '[]'
        THEN r.created <= t AND (r.retired_at IS NULL OR t < r.retired_at)
        ELSE any(p IN split(r.intervals, '{"from":"')[1..]
                 WHERE substring(p, 0, 27) <= t AND (substring(p, 34, 4) = 'null' OR t < substring(p, 35, 27))) END)
       } ELSE false END AS has_upstream,
       CASE WHEN id IN $down THEN EXISTS {
         MATCH (c)-[r:LINEAGE]->(n)
         WHERE ((n:Container AND NOT n.id IN $ids) OR (n:External AND NOT r.id IN $known))
           AND any(t IN $at WHERE CASE WHEN coalesce(r.intervals, '[]') = '[]'
        THEN r.created <= t AND (r.retired_at IS NULL OR t < r.retired_at)
        ELSE any(p IN split(r.intervals, '{"from":"')[1..]
                 WHERE substring(p, 0, 27) <= t AND (substring(p, 34, 4) = 'null' OR t < substring(p, 35, 27))) END)
       } ELSE false END AS has_downstream
