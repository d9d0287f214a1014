// Parameters: $rows: [event properties as for insert_event's $row], ids and fingerprints
// distinct (the constraints refuse repeats).
UNWIND $rows AS row
CREATE (e:Event)
SET e = row
