// Parameters: none. Whether anything but the id counters is stored.
RETURN EXISTS { MATCH (n) WHERE NOT n:Counter } AS has_data
