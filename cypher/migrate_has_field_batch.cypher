// Parameters: $after (int: the last field id done, 0 at first).
// Schema version 3, in batches before the step's transaction: links up to 10,000 fields (by id,
// after $after) to their container with HAS_FIELD, as upsert_container does from then on.
// Idempotent (MERGE). Returns the last id done, null when there was none left.
MATCH (f:Field)
WHERE f.id > $after
WITH f ORDER BY f.id LIMIT 10000
CALL (f) {
  MATCH (c:Container {id: f.container_id})
  MERGE (c)-[:HAS_FIELD]->(f)
}
RETURN max(f.id) AS last
