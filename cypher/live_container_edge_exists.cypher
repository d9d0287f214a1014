// Parameters: $source, $target (int): container ids.
RETURN EXISTS {
  MATCH (:Container {id: $source})-[r:LINEAGE]->(:Container {id: $target})
  WHERE r.retired_at IS NULL
} AS exists
