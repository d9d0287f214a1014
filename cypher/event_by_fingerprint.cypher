// Parameters: $fingerprint (string).
MATCH (e:Event {fingerprint: $fingerprint})
RETURN e {.*} AS event
