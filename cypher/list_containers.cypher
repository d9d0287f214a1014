// Parameters: $name (string or null: case-insensitive substring of the name), $skip, $limit (int).
// One page of live containers by id, and the total.
MATCH (c:Container)
WHERE NOT c.deleted AND ($name IS NULL OR toLower(c.name) CONTAINS toLower($name))
WITH c ORDER BY c.id SKIP $skip LIMIT $limit
WITH collect(c {.*}) AS items
CALL () {
  MATCH (c:Container)
  WHERE NOT c.deleted AND ($name IS NULL OR toLower(c.name) CONTAINS toLower($name))
  RETURN count(c) AS total
}
RETURN items, total
