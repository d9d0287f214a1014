// Parameters: $id (int). Soft-deletes a live field (`deleted = true`, `key` removed so the name can
// be reused; relationships stay). Its container is write-locked first, in the same order as
// upsert_container, so the two serialize. Returns 1 when a live field was deleted, else 0.
MATCH (f:Field {id: $id})
WHERE NOT f.deleted
OPTIONAL MATCH (c:Container {id: f.container_id})
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END | SET x.locked = true REMOVE x.locked)
SET f.deleted = true
REMOVE f.key
RETURN count(f) AS deleted
