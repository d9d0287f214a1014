// Parameters: none.
CREATE INDEX lineage_source_type IF NOT EXISTS
FOR ()-[r:LINEAGE]-() ON (r.source_type)
