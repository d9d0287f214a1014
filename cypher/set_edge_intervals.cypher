// Parameters: $rows: [{id: int, intervals: string (JSON list of {from, to})}].
UNWIND $rows AS row
MATCH ()-[r:LINEAGE {id: row.id}]->()
SET r.intervals = row.intervals
