// Parameters: $run_ids: [string] (distinct). `run_event_states` for many runs in one read: the
// id, status and eventType of every stored event of each run, through the run-id index, without
// the bodies, by run in the given order, then by id.
UNWIND range(0, size($run_ids) - 1) AS i
WITH i, $run_ids[i] AS run_id
MATCH (e:Event {run_id: run_id})
RETURN run_id, e.id AS id, e.status AS status, e.event_type AS event_type
ORDER BY i, e.id
