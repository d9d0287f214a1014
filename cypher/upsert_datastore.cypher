// Parameters: $name (string, the key), $type (string), $store_type (string or null),
// $namespaces ([string]), $enrichment_only (bool), $new_id (int or null: the id a datastore that
// does not exist yet gets). Every attribute is replaced by the input.
MERGE (d:Datastore {name: $name})
ON CREATE SET d.id = $new_id
SET d.type = $type,
    d.store_type = $store_type,
    d.namespaces = $namespaces,
    d.enrichment_only = $enrichment_only
RETURN d {.*} AS datastore
