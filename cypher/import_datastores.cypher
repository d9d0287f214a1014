// Parameters: $rows: [{id: int, name, type: string, store_type: string or null,
// namespaces: [string], enrichment_only: bool}].
UNWIND $rows AS row
CREATE (d:Datastore)
SET d = row
