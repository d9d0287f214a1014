// Parameters: $rows: [{name: string, value: int}]. Moves each id counter to at least `value`
// (after an import that kept its ids).
UNWIND $rows AS row
MERGE (k:Counter {name: row.name})
ON CREATE SET k.value = 0
SET k.value = CASE WHEN k.value < row.value THEN row.value ELSE k.value END
