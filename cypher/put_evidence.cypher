// Parameters: $rows: [{edge_id: int, key: string, provider, evidence_type, authorship: string,
// source_relation: string or null, observed_at: string (RFC 3339) or null,
// first_observed_operation_id, last_observed_operation_id: int or null, details: string (JSON) or
// null, retired_at: string (RFC 3339) or null}]. Adds or replaces the evidence keyed by
// (edge_id, key); a later row with the same key wins.
UNWIND $rows AS row
MERGE (e:Evidence {edge_id: row.edge_id, key: row.key})
SET e = row
