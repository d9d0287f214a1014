// Parameters: $source_type (string or null), $include_retired (bool), $skip, $limit (int).
// One page of edges by id, and the total.
MATCH ()-[r:LINEAGE]->()
WHERE ($source_type IS NULL OR r.source_type = $source_type)
  AND ($include_retired OR r.retired_at IS NULL)
WITH r ORDER BY r.id SKIP $skip LIMIT $limit
WITH collect(r {.*}) AS items
CALL () {
  MATCH ()-[r:LINEAGE]->()
  WHERE ($source_type IS NULL OR r.source_type = $source_type)
    AND ($include_retired OR r.retired_at IS NULL)
  RETURN count(r) AS total
}
RETURN items, total
