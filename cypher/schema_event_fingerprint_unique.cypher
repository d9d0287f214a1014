// Parameters: none. One event per fingerprint (the hash of its canonical body); what makes
// insert_event's MERGE safe against a concurrent duplicate.
CREATE CONSTRAINT event_fingerprint_unique IF NOT EXISTS
FOR (e:Event) REQUIRE e.fingerprint IS UNIQUE
