// Parameters: $key (string: `<datastore id>/<database.schema.name>`), $new_id (int or null: the
// id a container that does not exist yet gets), $datastore_id (int), $name (string), $name_lc
// (string: $name lowercased by the service),
// $database, $schema (string or null), $container_type, $table_type, $display_name, $purpose
// (string or null), $active_anomaly_count (int or null),
// $fields: [{name: string, new_id: int or null, data_type, display_name, status: string or null,
// latest_profile_id: int or null, is_computed_field: bool or null, active_anomaly_count: int or
// null}].
// A null attribute keeps the stored value on update and takes the default on create. Fields are
// merged by name; unlisted fields are kept. Returns the container and the listed fields, in the
// order of $fields (as the embedded store does). The container hangs under its datastore
// (CONTAINS) and its fields under it (HAS_FIELD), for people and Cypher; the reads use the id
// properties.
MERGE (c:Container {key: $key})
ON CREATE SET
  c.id = $new_id,
  c.datastore_id = $datastore_id,
  c.name = $name,
  c.name_lc = $name_lc,
  c.database = $database,
  c.schema = $schema,
  c.deleted = false,
  c.container_type = coalesce($container_type, 'table'),
  c.table_type = $table_type,
  c.display_name = $display_name,
  c.purpose = $purpose,
  c.active_anomaly_count = coalesce($active_anomaly_count, 0)
ON MATCH SET
  c.container_type = coalesce($container_type, c.container_type),
  c.table_type = coalesce($table_type, c.table_type),
  c.display_name = coalesce($display_name, c.display_name),
  c.purpose = coalesce($purpose, c.purpose),
  c.active_anomaly_count = coalesce($active_anomaly_count, c.active_anomaly_count)
WITH c
CALL (c) {
  MATCH (d:Datastore {id: c.datastore_id})
  MERGE (d)-[:CONTAINS]->(c)
}
CALL (c) {
  UNWIND $fields AS fr
  MERGE (f:Field {key: toString(c.id) + '/' + fr.name})
  ON CREATE SET
    f.id = fr.new_id,
    f.container_id = c.id,
    f.name = fr.name,
    f.deleted = false,
    f.data_type = fr.data_type,
    f.display_name = fr.display_name,
    f.status = coalesce(fr.status, 'active'),
    f.latest_profile_id = fr.latest_profile_id,
    f.is_computed_field = coalesce(fr.is_computed_field, false),
    f.active_anomaly_count = coalesce(fr.active_anomaly_count, 0)
  ON MATCH SET
    f.data_type = coalesce(fr.data_type, f.data_type),
    f.display_name = coalesce(fr.display_name, f.display_name),
    f.status = coalesce(fr.status, f.status),
    f.latest_profile_id = coalesce(fr.latest_profile_id, f.latest_profile_id),
    f.is_computed_field = coalesce(fr.is_computed_field, f.is_computed_field),
    f.active_anomaly_count = coalesce(fr.active_anomaly_count, f.active_anomaly_count)
  MERGE (c)-[:HAS_FIELD]->(f)
}
RETURN c {.*} AS container,
       COLLECT {
         UNWIND range(0, size($fields) - 1) AS i
         MATCH (f:Field {key: toString(c.id) + '/' + $fields[i].name})
         WITH i, f ORDER BY i
         RETURN f {.*}
       } AS fields
