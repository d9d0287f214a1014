// Parameters: $ids ([int], distinct).
UNWIND $ids AS id
MATCH (j:Job {id: id})
RETURN j {.*} AS job
ORDER BY j.id
