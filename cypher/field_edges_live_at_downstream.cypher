// Parameters: $ids ([int], distinct): field ids; $at ([string]). Field-level edges live at one
// of the instants (retired since, deleted ends included) whose source is one of these fields.
// Live at one of $at ([string]: instants as the store writes timestamps, 27 characters) is
// domain::live_at spelled in Cypher: inside one of the intervals (a JSON list of
// {"from":"<ts>","to":null|"<ts>"} written by rows::intervals_text, each timestamp 27
// characters, so they are cut out of the text and compared as text), or, with none recorded,
// from created while unretired.
UNWIND $ids AS id
MATCH (f:Field {id: id})-[r:LINEAGE]->(:Field)
WHERE any(t IN $at WHERE CASE WHEN coalesce(r.intervals, '[]') = '[]'
    THEN r.created <= t AND (r.retired_at IS NULL OR t < r.retired_at)
    ELSE any(p IN split(r.intervals, '{"from":"')[1..]
             WHERE substring(p, 0, 27) <= t AND (substring(p, 34, 4) = 'null' OR t < substring(p, 35, 27))) END)
RETURN r {.*} AS edge
ORDER BY r.id
