// Parameters: none. Evidence by key alone (evidence_by_keys): the (edge_id, key) constraint's
// index cannot serve a lookup on its second property.
CREATE INDEX evidence_key IF NOT EXISTS
FOR (e:Evidence) ON (e.key)
