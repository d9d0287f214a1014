// Parameters: $row: {id: int, fingerprint, kind: string, job_namespace, job_name, run_id,
// event_type: string or null, event_time: string (RFC 3339) or null, received_at: string
// (RFC 3339), submitted_by: string or null, status: string, errors, summary, body: string (JSON)}.
// Creates the event unless one with its fingerprint exists (the uniqueness constraint makes a
// concurrent duplicate wait and then match). `created` is false when it already existed.
MERGE (e:Event {fingerprint: $row.fingerprint})
ON CREATE SET e = $row
RETURN e {.*} AS event, e.id = $row.id AS created
