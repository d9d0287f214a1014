// Parameters: none. Deletes up to 10,000 nodes other than the id counters and identity documents,
// with their relationships: undoing an import that failed part of the way (an import starts on a
// store holding nothing else). The caller repeats it until it reports 0.
MATCH (n)
WHERE NOT n:Counter AND NOT n:Doc
WITH n LIMIT 10000
DETACH DELETE n
RETURN count(*) AS deleted
