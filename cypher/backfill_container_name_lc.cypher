// Parameters: none.
// Containers written before `name_lc` existed get it once, at start-up; afterwards every write
// sets it. Returns how many were filled in.
MATCH (c:Container)
WHERE c.name_lc IS NULL
SET c.name_lc = toLower(c.name)
RETURN count(c) AS filled
