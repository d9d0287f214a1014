// Parameters: $rows: [{container_id: int, field_id: int (0 for the container's own value),
// attribute, source, provider: string, value: string (JSON), asserted_at, observed_at: string
// (RFC 3339), details: string (JSON) or null}]. Upserts each row keyed by (container_id,
// field_id, attribute, source), in order (a later row with the same key applies last):
// asserted_at moves only when the value changes (a new node has no value yet, so it takes the
// row's); value, provider, observed_at and details always take the row's. asserted_at is set
// first, while m.value is still the stored one.
UNWIND $rows AS row
MERGE (m:Metadata {container_id: row.container_id, field_id: row.field_id, attribute: row.attribute,
                   source: row.source})
SET m.asserted_at = CASE WHEN m.value = row.value THEN m.asserted_at ELSE row.asserted_at END,
    m.value = row.value,
    m.provider = row.provider,
    m.observed_at = row.observed_at,
    m.details = row.details
