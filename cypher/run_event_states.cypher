// Parameters: $run_id (string). Id, status and eventType of every stored event of the run,
// through the run-id index, without the bodies: a START asks whether its run already failed.
MATCH (e:Event {run_id: $run_id})
RETURN e.id AS id, e.status AS status, e.event_type AS event_type
ORDER BY e.id
