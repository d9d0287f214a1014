// Parameters: $ids ([int], distinct): container ids; $exclude ([int]): container ids in the
// answer. Per container: its distinct live downstream neighbours (containers outside $exclude
// and external assets).
UNWIND $ids AS id
MATCH (s:Container {id: id})
RETURN id, COUNT { MATCH (s)-[r:LINEAGE]->(t)
  WHERE r.retired_at IS NULL
    AND (t:External OR (t:Container AND NOT t.deleted AND NOT t.id IN $exclude))
  RETURN DISTINCT t } AS beyond
