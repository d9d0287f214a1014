// Parameters: none. `received_at` is an RFC 3339 UTC string with microseconds, so text order is
// time order (list_events bounds, purge_events).
CREATE INDEX event_received_at IF NOT EXISTS
FOR (e:Event) ON (e.received_at)
