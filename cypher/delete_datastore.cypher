// Parameters: $id (int). Soft-deletes the datastore's live containers and their live fields
// (`deleted = true`, `key` removed so it can be reused; relationships stay so retired edges keep
// their ends), then removes the datastore node itself with its CONTAINS relationships. Returns 1
// when it existed, else 0.
MATCH (d:Datastore {id: $id})
CALL (d) {
  MATCH (c:Container {datastore_id: d.id})
  WHERE NOT c.deleted
  SET c.deleted = true
  REMOVE c.key
  WITH c
  MATCH (f:Field {container_id: c.id})
  WHERE NOT f.deleted
  SET f.deleted = true
  REMOVE f.key
}
DETACH DELETE d
RETURN count(*) AS deleted
