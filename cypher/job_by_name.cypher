// Parameters: $namespace, $name (string). The job, or no row.
MATCH (j:Job {namespace: $namespace, name: $name})
RETURN j {.*} AS job
