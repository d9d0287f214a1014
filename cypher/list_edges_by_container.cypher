// Parameters: $container_id (int): a container end; $field_id (int or null: also a field end),
// $source_type (string or null), $include_retired (bool), $skip, $limit (int).
// One page of edges by id, and the total.
MATCH (:Container {id: $container_id})-[r:LINEAGE]-()
WITH DISTINCT r
WHERE ($field_id IS NULL
       OR (r.source_kind = 'field' AND r.source_id = $field_id)
       OR (r.target_kind = 'field' AND r.target_id = $field_id))
  AND ($source_type IS NULL OR r.source_type = $source_type)
  AND ($include_retired OR r.retired_at IS NULL)
WITH r ORDER BY r.id SKIP $skip LIMIT $limit
WITH collect(r {.*}) AS items
CALL () {
  MATCH (:Container {id: $container_id})-[r:LINEAGE]-()
  WITH DISTINCT r
  WHERE ($field_id IS NULL
         OR (r.source_kind = 'field' AND r.source_id = $field_id)
         OR (r.target_kind = 'field' AND r.target_id = $field_id))
    AND ($source_type IS NULL OR r.source_type = $source_type)
    AND ($include_retired OR r.retired_at IS NULL)
  RETURN count(r) AS total
}
RETURN items, total
