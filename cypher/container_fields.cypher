// Parameters: $container_id (int), $name (string or null: substring of the name, lowercased by
// the service; Neo4j's `toLower` folds Unicode as Rust does), $skip, $limit (int). One page of
// the container's live fields by id, and the total.
MATCH (f:Field {container_id: $container_id})
WHERE NOT f.deleted AND ($name IS NULL OR toLower(f.name) CONTAINS $name)
WITH f ORDER BY f.id SKIP $skip LIMIT $limit
WITH collect(f {.*}) AS items
CALL () {
  MATCH (f:Field {container_id: $container_id})
  WHERE NOT f.deleted AND ($name IS NULL OR toLower(f.name) CONTAINS $name)
  RETURN count(f) AS total
}
RETURN items, total
