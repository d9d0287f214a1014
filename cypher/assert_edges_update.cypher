// Parameters: $rows: [{id: int, intervals: string (JSON list of {from, to}), last_asserted_at:
// string (RFC 3339) or null, operation: string or null, derived: bool or null, transformations:
// string (JSON) or null}], ids distinct. Existing edges asserted again: live (`retired_at`
// removed) with the attributes the caller computed (a null removes the property).
UNWIND $rows AS row
MATCH ()-[r:LINEAGE {id: row.id}]->()
SET r.retired_at = null,
    r.intervals = row.intervals,
    r.last_asserted_at = row.last_asserted_at,
    r.operation = row.operation,
    r.derived = row.derived,
    r.transformations = row.transformations
RETURN count(r) AS updated
