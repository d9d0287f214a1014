// Parameters: $ids ([int], distinct). The jobs whose parent is one of $ids, by id.
MATCH (j:Job)
WHERE j.parent_id IN $ids
RETURN j {.*} AS job
ORDER BY j.id
