// Parameters: none. Deletes up to 10,000 nodes, once wipe_relationships_batch has removed every
// relationship (DETACH still covers one created meanwhile); the caller repeats it until it
// reports 0. A batch loop instead of CALL { } IN TRANSACTIONS, which explicit transactions refuse.
// The schema-version node stays, like the constraints and indexes it describes.
MATCH (n) WHERE NOT n:TributarySchema
WITH n LIMIT 10000
DETACH DELETE n
RETURN count(*) AS deleted
