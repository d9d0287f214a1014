// Parameters: none. Deletes up to 10,000 relationships; the caller repeats it until it reports 0.
// Relationships go first, in bounded batches, so deleting a node never drags an unbounded number
// of relationships into one transaction (a node may have thousands).
MATCH ()-[r]->()
WITH r LIMIT 10000
DELETE r
RETURN count(*) AS deleted
