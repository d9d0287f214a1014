// Parameters: none. Creates the change log's counter when the store has none (a store made
// before the change log, or a new one) and answers whether this transaction created it, and so
// must backfill the log. The SET reads the property it writes, so a second replica starting at
// the same time waits on the node's lock and then finds the claim taken.
MERGE (k:Counter {name: 'change'})
ON CREATE SET k.value = 0, k.backfill = true
SET k.backfill = coalesce(k.backfill, false)
WITH k, k.backfill AS todo
REMOVE k.backfill
RETURN todo
