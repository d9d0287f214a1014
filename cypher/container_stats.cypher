// Parameters: $ids ([int], distinct). Per live container: its live fields, and those of them with
// at least one live (not retired) edge.
UNWIND $ids AS id
MATCH (c:Container {id: id})
WHERE NOT c.deleted
RETURN c.id AS container_id,
       COUNT { MATCH (f:Field {container_id: c.id}) WHERE NOT f.deleted } AS field_count,
       COUNT {
         MATCH (f:Field {container_id: c.id})
         WHERE NOT f.deleted AND EXISTS { (f)-[r:LINEAGE]-() WHERE r.retired_at IS NULL }
       } AS linked_field_count
ORDER BY container_id
