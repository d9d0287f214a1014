// Parameters: $container_ids, $field_ids ([int], distinct), $fqns ([string], distinct): the ends;
// $source_type (string). Live edges of that source type with either end on one of them (a
// container end is the container itself, not its fields).
CALL () {
  UNWIND $container_ids AS id
  MATCH (:Container {id: id})-[r:LINEAGE]-()
  RETURN r
  UNION
  UNWIND $field_ids AS id
  MATCH (:Field {id: id})-[r:LINEAGE]-()
  RETURN r
  UNION
  UNWIND $fqns AS fqn
  MATCH (:External {fqn: fqn})-[r:LINEAGE]-()
  RETURN r
}
WITH r
WHERE r.retired_at IS NULL AND r.source_type = $source_type
RETURN r {.*} AS edge
ORDER BY r.id
