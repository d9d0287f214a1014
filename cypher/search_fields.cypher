// Parameters: $needle (string, lowercased by the service), $datastore_ids ([int] or null: only
// these datastores), $limit (int). Live fields of live containers whose `table.column` or
// `database.schema.table.column` (lowercased) contains the needle, ranked as
// search_containers.cypher.
MATCH (c:Container)
WHERE NOT c.deleted AND ($datastore_ids IS NULL OR c.datastore_id IN $datastore_ids)
WITH c, toLower(reduce(s = '', p IN [x IN [c.database, c.schema, c.name] WHERE x IS NOT NULL AND x <> ''] |
  CASE WHEN s = '' THEN p ELSE s + '.' + p END)) AS cq
MATCH (f:Field {container_id: c.id})
WHERE NOT f.deleted
WITH f, toLower(c.name + '.' + f.name) AS short, cq + '.' + toLower(f.name) AS q
WHERE q CONTAINS $needle
RETURN f {.*} AS field
ORDER BY CASE WHEN short = $needle OR q = $needle THEN 0 WHEN short STARTS WITH $needle OR q STARTS WITH $needle THEN 1 ELSE 2 END,
  size(short), q, f.id
LIMIT $limit
