// Parameters: $needle (string, lowercased by the service; empty for all), $source_type (string).
// The external assets a registration may adopt (Store::external_placeholders): each job dataset
// naming one, as (fqn, namespace, name as sent), and each one a live edge of the source type
// names, as (fqn, '', ''). Distinct, ordered.
MATCH (x:External)
WHERE toLower(x.fqn) CONTAINS $needle
CALL (x) {
  MATCH (:Job)-[io:READS|WRITES]->(x)
  RETURN io.namespace AS namespace, io.name AS name
  UNION
  MATCH (x)-[r:LINEAGE]-()
  WHERE r.retired_at IS NULL AND r.source_type = $source_type
  WITH r LIMIT 1
  RETURN '' AS namespace, '' AS name
}
RETURN DISTINCT x.fqn AS fqn, namespace, name
ORDER BY fqn, namespace, name
