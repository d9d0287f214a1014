// Parameters: $name (string or null: substring of the name or of the qualified name
// `database.schema.name`, lowercased by the service), $skip,
// $limit (int). One page of live containers by id, and the total.
MATCH (c:Container)
WHERE NOT c.deleted AND ($name IS NULL OR c.name_lc CONTAINS $name OR toLower(reduce(s = '', p IN [x IN [c.database, c.schema, c.name] WHERE x IS NOT NULL AND x <> ''] | CASE WHEN s = '' THEN p ELSE s + '.' + p END)) CONTAINS $name)
WITH c ORDER BY c.id SKIP $skip LIMIT $limit
WITH collect(c {.*}) AS items
CALL () {
  MATCH (c:Container)
  WHERE NOT c.deleted AND ($name IS NULL OR c.name_lc CONTAINS $name OR toLower(reduce(s = '', p IN [x IN [c.database, c.schema, c.name] WHERE x IS NOT NULL AND x <> ''] | CASE WHEN s = '' THEN p ELSE s + '.' + p END)) CONTAINS $name)
  RETURN count(c) AS total
}
RETURN items, total
