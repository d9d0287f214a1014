// Parameters: $ids ([int], distinct): container ids; $exclude ([int]): container ids in the
// answer. Per container: its distinct live upstream neighbours (containers outside $exclude and
// external assets).
UNWIND $ids AS id
MATCH (t:Container {id: id})
RETURN id, COUNT { MATCH (t)<-[r:LINEAGE]-(s)
  WHERE r.retired_at IS NULL
    AND (s:External OR (s:Container AND NOT s.deleted AND NOT s.id IN $exclude))
  RETURN DISTINCT s } AS beyond
