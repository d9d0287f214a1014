// Parameters: $id (int). The ids of the datastore's live containers (what deleting it drops).
MATCH (c:Container {datastore_id: $id})
WHERE NOT c.deleted
RETURN c.id AS id
ORDER BY id
