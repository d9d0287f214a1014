// Parameters: none. Deletes up to 10,000 nodes with their relationships; the caller repeats it
// until it reports 0 (a batch loop instead of CALL { } IN TRANSACTIONS).
MATCH (n)
WITH n LIMIT 10000
DETACH DELETE n
RETURN count(*) AS deleted
