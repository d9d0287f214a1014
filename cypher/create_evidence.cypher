// Parameters: $rows: [evidence properties as for put_evidence, retired_at null], each of an edge
// created in this same transaction (fresh ids, never reused): no evidence can exist for them, so
// CREATE, without MERGE's lookup and lock on the (edge_id, key) constraint. Returns how many.
UNWIND $rows AS row
CREATE (e:Evidence)
SET e = row
RETURN count(e) AS created
