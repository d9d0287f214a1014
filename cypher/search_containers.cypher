// Parameters: $needle (string, lowercased by the service), $datastore_ids ([int] or null: only
// these datastores), $limit (int). Live containers whose qualified name (`database.schema.name`,
// empty parts left out, lowercased) contains the needle: an exact qualified name or name first,
// then those the needle starts, then the rest; shorter names first within each.
MATCH (c:Container)
WHERE NOT c.deleted AND ($datastore_ids IS NULL OR c.datastore_id IN $datastore_ids)
WITH c, toLower(reduce(s = '', p IN [x IN [c.database, c.schema, c.name] WHERE x IS NOT NULL AND x <> ''] |
  CASE WHEN s = '' THEN p ELSE s + '.' + p END)) AS q
WHERE q CONTAINS $needle
RETURN c {.*} AS container
ORDER BY CASE WHEN q = $needle OR c.name_lc = $needle THEN 0
  WHEN q STARTS WITH $needle OR c.name_lc STARTS WITH $needle THEN 1 ELSE 2 END, size(q), q, c.id
LIMIT $limit
