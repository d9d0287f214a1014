// Parameters: $rows: a list of event rows as in insert_event.cypher, ids already allocated.
// Creates each event unless one with its fingerprint exists, in list order, so a later row with
// an earlier row's fingerprint matches that event. One result row per input row, by `i`;
// `created` is false when the event already existed.
UNWIND range(0, size($rows) - 1) AS i
WITH i, $rows[i] AS row
MERGE (e:Event {fingerprint: row.fingerprint})
ON CREATE SET e = row
RETURN i, e {.*} AS event, e.id = row.id AS created
ORDER BY i
