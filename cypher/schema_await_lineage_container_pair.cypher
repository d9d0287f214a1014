// Parameters: none. Waits (up to 5 minutes) for the `lineage_container_pair` index to be online:
// created on a database with edges, it is filled in the background, and until then the planner
// would scan every edge for the ingest's read-ahead.
CALL db.awaitIndex('lineage_container_pair', 300)
