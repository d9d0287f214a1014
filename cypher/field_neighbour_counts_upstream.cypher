// Parameters: $ids ([int], distinct): field ids; $exclude ([int]): field ids in the answer. Per
// field: its distinct live upstream fields outside $exclude.
UNWIND $ids AS id
MATCH (t:Field {id: id})
RETURN id, COUNT { MATCH (t)<-[r:LINEAGE]-(s:Field)
  WHERE r.retired_at IS NULL AND NOT s.deleted AND NOT s.id IN $exclude
  RETURN DISTINCT s } AS beyond
