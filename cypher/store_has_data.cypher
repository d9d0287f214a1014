// Parameters: none. Whether anything but the id counters and identity documents is stored (a
// first-start admin does not stop an import; imported documents replace it).
RETURN EXISTS { MATCH (n) WHERE NOT n:Counter AND NOT n:Doc } AS has_data
