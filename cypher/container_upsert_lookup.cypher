// Parameters: $datastore_id (int), $key (string: `<datastore id>/<database.schema.name>`).
// Whether the datastore exists, the id of the live container with that key and the names of its
// live fields. The container is write-locked (the `locked` property is set and removed again) so
// a concurrent upsert or delete of it waits for this transaction.
OPTIONAL MATCH (d:Datastore {id: $datastore_id})
OPTIONAL MATCH (c:Container {key: $key})
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END | SET x.locked = true REMOVE x.locked)
RETURN d IS NOT NULL AS datastore_exists,
       c.id AS container_id,
       COLLECT { MATCH (f:Field {container_id: c.id}) WHERE NOT f.deleted RETURN f.name } AS field_names
