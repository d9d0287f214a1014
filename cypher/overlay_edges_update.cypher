// Parameters: $rows: [{id: int, retired_at: string (RFC 3339) or null, intervals: string (JSON
// list of {from, to}), last_asserted_at: string or null, operation: string or null, derived: bool
// or null, transformations: string (JSON) or null}], ids distinct.
// A session's stored edges as its assertion buffer left them (asserted again, revived or
// retired: `store/neo4j/overlay.rs`), in one statement; a null removes the property.
UNWIND $rows AS row
MATCH ()-[r:LINEAGE {id: row.id}]->()
SET r.retired_at = row.retired_at,
    r.intervals = row.intervals,
    r.last_asserted_at = row.last_asserted_at,
    r.operation = row.operation,
    r.derived = row.derived,
    r.transformations = row.transformations
RETURN count(r) AS updated
