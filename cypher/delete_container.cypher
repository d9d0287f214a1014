// Parameters: $id (int). Soft-deletes a live container and its live fields: `deleted = true` and
// `key` removed so the names can be reused; relationships stay so retired edges keep their ends.
// Returns 1 when a live container was deleted, else 0.
MATCH (c:Container {id: $id})
WHERE NOT c.deleted
SET c.deleted = true
REMOVE c.key
WITH c
CALL (c) {
  MATCH (f:Field {container_id: c.id})
  WHERE NOT f.deleted
  SET f.deleted = true
  REMOVE f.key
}
RETURN count(c) AS deleted
