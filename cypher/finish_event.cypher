// Parameters: $id (int), $status (string), $errors, $summary (string: JSON). Records the outcome
// of applying a stored event; an unknown id changes nothing.
MATCH (e:Event {id: $id})
SET e.status = $status,
    e.errors = $errors,
    e.summary = $summary
