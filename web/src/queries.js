// Every GraphQL document the page sends. They ask only for what the page shows, and stay under the
// server's complexity cap (150,000; a list taking `size` or `limit` weighs that many copies of
// its selection) and alias cap (50).

/** One per draw, and one per expansion (depth 1, one side). */
export const GRAPH = `query Graph($id: Int!, $depth: Int!, $side: Side) {
  lineageGraph(containerId: $id, depth: $depth, side: $side) {
    nodes { id name displayName containerType isTarget hasUpstream hasDownstream fieldCount datastore { id name type } }
    edges { id sourceContainerId targetContainerId sourceType operation description }
    externalNodes { id fqn sourceType }
    externalEdges { id sourceContainerId targetContainerId sourceNodeId targetNodeId sourceType operation description }
  }
}`;

export const SEARCH_FIRST = 12;
export const SEARCH = `query Search($name: String!) {
  search(query: $name, kinds: [CONTAINER], first: ${SEARCH_FIRST}) {
    qualifiedName match
    container { id name displayName database schema containerType datastore { name } }
  }
}`;

/** Limits of the side panel's lists: the counts say when they cut. */
export const IMPACT_LIMIT = 5000;
export const PANEL_EDGES = 500;

/** The side panel of a container: everything but its metadata (which needs REPORTER: a refusal
 * there would null the whole answer, so it has its own request) and its field edges (which need
 * the field ids). `me` says which evidence the caller may see. */
export const PANEL = `query Panel($id: Int!) {
  me { user role unrestrictedAdmin permissions { datastoreId permission } }
  container(id: $id) {
    id name displayName containerType tableType database schema purpose activeAnomalyCount
    fieldCount linkedFieldCount datastore { id name type storeType }
  }
  containerFields(containerId: $id, size: 1000) {
    total
    items { id name displayName type status isComputedField hasLineage activeAnomalyCount }
  }
  impact(containerId: $id, limit: ${IMPACT_LIMIT}) {
    isPartial
    containers { distance container { id name } via { id operation sourceType } }
    externals { distance external { id fqn sourceType } via { id operation sourceType } }
  }
  edges(containerId: $id, includeRetired: true, size: ${PANEL_EDGES}) {
    total
    items {
      id sourceContainerId targetContainerId sourceNodeId targetNodeId sourceFieldId targetFieldId
      sourceType operation description created lastAssertedAt retiredAt
      sourceContainer { id name datastoreId } targetContainer { id name datastoreId }
      evidence {
        provider evidenceType authorship sourceRelation observedAt
        firstObservedOperationId lastObservedOperationId details retiredAt
      }
    }
  }
}`;

export const METADATA = `query Metadata($id: Int!) {
  metadataAssertions(containerId: $id) {
    containerId fieldId attribute source provider value assertedAt observedAt effective
  }
}`;

/** Field edges of many fields in one request: one alias per field, at most this many. */
export const FIELD_EDGES_PER_REQUEST = 40;
export function fieldEdges(fieldIds) {
  const vars = fieldIds.map((_, i) => `$f${i}: Int!`).join(', ');
  const parts = fieldIds.map((_, i) => `f${i}: edges(fieldId: $f${i}, size: 100) { total items { ...FieldEdge } }`);
  return `query FieldEdges(${vars}) {
  ${parts.join('\n  ')}
}
fragment FieldEdge on LineageEdge {
  id sourceFieldId targetFieldId sourceType operation derived description
  sourceField { id name containerId container { id name } }
  targetField { id name containerId container { id name } }
}`;
}

export const PII_LIMIT = 2000;
/** A field's column lineage (every field connected through field edges) and where its value
 * flows, both ways. */
export const FIELD_PATH = `query FieldPath($f: Int!) {
  field(id: $f) { id name containerId container { id name } }
  fieldConnections(fieldId: $f) {
    fields { id name containerId container { id name } }
    edges { id sourceFieldId targetFieldId derived operation sourceType }
  }
  down: piiFlow(fieldId: $f, limit: ${PII_LIMIT}) {
    isPartial
    fields { distance derived field { id name containerId container { id name } } }
  }
  up: piiFlow(fieldId: $f, side: UPSTREAM, limit: ${PII_LIMIT}) {
    isPartial
    fields { distance derived field { id name containerId container { id name } } }
  }
}`;
