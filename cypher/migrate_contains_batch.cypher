// Parameters: $after (int: the last container id done, 0 at first).
// Schema version 3, in batches before the step's transaction: links up to 10,000 containers (by
// id, after $after) to their datastore with CONTAINS, as upsert_container does from then on.
// Idempotent (MERGE), so a batch run again after an interrupted upgrade changes nothing. A
// container whose datastore is gone (deleted with it) gets none. Returns the last id done, null
// when there was none left.
MATCH (c:Container)
WHERE c.id > $after
WITH c ORDER BY c.id LIMIT 10000
CALL (c) {
  MATCH (d:Datastore {id: c.datastore_id})
  MERGE (d)-[:CONTAINS]->(c)
}
RETURN max(c.id) AS last
