// Parameters: none. The earliest `created` of any edge (times are fixed-width RFC 3339 text, so
// the smallest text is the earliest time); null in an empty store.
MATCH ()-[r:LINEAGE]->()
RETURN min(r.created) AS created
