// Parameters: none.
CREATE INDEX event_run_id IF NOT EXISTS
FOR (e:Event) ON (e.run_id)
