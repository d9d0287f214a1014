// Parameters: $id (int), $set_description (bool: whether to replace the description),
// $description (string or null), $source_type (string or null: keep), $ukey (string or null: keep;
// the new uniqueness key when the source type changes).
MATCH ()-[r:LINEAGE {id: $id}]->()
SET r.description = CASE WHEN $set_description THEN $description ELSE r.description END,
    r.source_type = coalesce($source_type, r.source_type),
    r.ukey = coalesce($ukey, r.ukey)
RETURN r {.*} AS edge
