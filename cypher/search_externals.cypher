// Parameters: $needle (string, lowercased by the service), $limit (int). Assets outside the
// catalog that a live edge names, as (fqn, source type), whose fqn (lowercased) contains the
// needle, ranked as search_containers.cypher.
MATCH (x:External)
WITH x, toLower(x.fqn) AS q
WHERE q CONTAINS $needle
MATCH (x)-[r:LINEAGE]-()
WHERE r.retired_at IS NULL
WITH DISTINCT x.fqn AS fqn, r.source_type AS source_type, q
RETURN fqn, source_type
ORDER BY CASE WHEN q = $needle THEN 0 WHEN q STARTS WITH $needle THEN 1 ELSE 2 END, size(fqn), fqn, source_type
LIMIT $limit
