// Parameters: $namespace (string or null), $name (string or null: a substring of the name,
// lowercased by the service), $state (string or null: the state of the job's latest run), $keys
// ([string] or null: end keys `c:<id>` of containers the job reads or writes), $skip, $limit
// (int). One page of jobs by id, and the total.
MATCH (j:Job)
WHERE ($namespace IS NULL OR j.namespace = $namespace)
  AND ($name IS NULL OR j.name_lc CONTAINS $name)
  AND ($state IS NULL OR EXISTS { MATCH (r:Run {id: j.latest_run_id}) WHERE r.state = $state })
  AND ($keys IS NULL OR EXISTS { MATCH (j)-[io:READS|WRITES]->() WHERE io.end_key IN $keys })
WITH j ORDER BY j.id SKIP $skip LIMIT $limit
WITH collect(j {.*}) AS items
CALL () {
  MATCH (j:Job)
  WHERE ($namespace IS NULL OR j.namespace = $namespace)
    AND ($name IS NULL OR j.name_lc CONTAINS $name)
    AND ($state IS NULL OR EXISTS { MATCH (r:Run {id: j.latest_run_id}) WHERE r.state = $state })
    AND ($keys IS NULL OR EXISTS { MATCH (j)-[io:READS|WRITES]->() WHERE io.end_key IN $keys })
  RETURN count(j) AS total
}
RETURN items, total
