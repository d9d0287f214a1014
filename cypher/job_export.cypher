// Parameters: none. Every job by id.
MATCH (j:Job)
RETURN j {.*} AS job
ORDER BY j.id
