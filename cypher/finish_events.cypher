// Parameters: $rows: a list of {id (int), status (string), errors, summary (string: JSON)}.
// Records each stored event's outcome; an unknown id changes nothing.
UNWIND $rows AS row
MATCH (e:Event {id: row.id})
SET e.status = row.status,
    e.errors = row.errors,
    e.summary = row.summary
