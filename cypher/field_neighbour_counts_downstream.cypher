// Parameters: $ids ([int], distinct): field ids; $exclude ([int]): field ids in the answer. Per
// field: its distinct live downstream fields outside $exclude.
UNWIND $ids AS id
MATCH (s:Field {id: id})
RETURN id, COUNT { MATCH (s)-[r:LINEAGE]->(t:Field)
  WHERE r.retired_at IS NULL AND NOT t.deleted AND NOT t.id IN $exclude
  RETURN DISTINCT t } AS beyond
