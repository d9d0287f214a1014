// Parameters: none. Edges by the containers of their two ends (a field end's container, a
// container end's own id): the edges between a pair of containers or their fields in one seek,
// as a chunk of OpenLineage events reads them ahead (overlay_read_ahead). Every edge the
// service writes carries both (`rows::edge_row`); an external end has none.
CREATE INDEX lineage_container_pair IF NOT EXISTS
FOR ()-[r:LINEAGE]-() ON (r.source_container_id, r.target_container_id)
