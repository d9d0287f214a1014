// Parameters: none. `at` is an RFC 3339 UTC string with microseconds (purge_changes).
CREATE INDEX change_at IF NOT EXISTS
FOR (c:Change) ON (c.at)
