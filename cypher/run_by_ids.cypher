// Parameters: $ids ([int], distinct): the runs' store ids.
UNWIND $ids AS id
MATCH (r:Run {id: id})
RETURN r {.*} AS run
ORDER BY r.id
