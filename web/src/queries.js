// Every GraphQL document the page sends. They ask only for what the page shows, and stay under the
// server's complexity cap (150,000; a list taking `size` or `limit` weighs that many copies of
// its selection) and alias cap (50).

const GRAPH_BODY = `
    nodes { id name displayName containerType isTarget hasUpstream hasDownstream fieldCount datastore { id name type } container { database schema }
      healthAlert @include(if: $health) }
    edges { id sourceContainerId targetContainerId sourceType operation description }
    externalNodes { id fqn sourceType }
    externalEdges { id sourceContainerId targetContainerId sourceNodeId targetNodeId sourceType operation description }
    isPartial
    frontier { id side distance reason beyond }
    jobs { id namespace name restricted latestRun { state startedAt } }
    jobEdges { jobId kind sourceNodeId targetNodeId }`;

const EDGE_CHANGE = `at edge { id sourceContainerId targetContainerId sourceNodeId targetNodeId sourceExternalFqn targetExternalFqn
      sourceType operation description retiredAt
      sourceContainer { id name displayName datastore { id name type } } targetContainer { id name displayName datastore { id name type } }
      evidence { provider authorship observedAt jobName runId } }`;

/** The failed runs still their job's latest, with the tables their job writes: the job a FAILED
 * table on the drawing links to (today's, so not asked as of an instant). */
const INCIDENT_JOBS = `incidents(first: 50) @include(if: $incidents) {
    items { state at errorMessage run { runId } job { id namespace name restricted outputs { container { id } } } }
  }`;

/** One per draw (with the diff, the size of the next depth and the failed runs in the same
 * request), and one per expansion (depth 1, one side). `health` asks which tables are FAILED or
 * STALE (as of the instant, when there is one); `incidents` asks today's failed runs. */
export const GRAPH = `query Graph($id: Int!, $depth: Int!, $side: Side, $asOf: DateTime, $max: Int, $jobs: Boolean = false,
    $sum: Boolean = false, $next: Int = 2, $diff: Boolean = false, $since: DateTime = "1970-01-01T00:00:00Z",
    $health: Boolean = false, $incidents: Boolean = false) {
  lineageGraph(containerId: $id, depth: $depth, side: $side, asOf: $asOf, maxNodes: $max, includeJobs: $jobs) {
    ${GRAPH_BODY}
    asOf { at notReconstructed }
  }
  ${INCIDENT_JOBS}
  summary: lineageSummary(containerId: $id, depth: $next, side: $side) @include(if: $sum) { nodes edges isPartial }
  diff: lineageDiff(containerId: $id, depth: $depth, side: $side, from: $since, to: $asOf) @include(if: $diff) {
    from to
    appearedNodes { kind containerId externalId }
    retiredNodes { kind containerId externalId container { id name displayName datastore { id name type } } }
    appearedEdges { ${EDGE_CHANGE} }
    retiredEdges { ${EDGE_CHANGE} }
  }
}`;

export const SEARCH_FIRST = 12;

/** The graph centred on a job (`/ui?job=<id>`). */
export const JOB_GRAPH = `query JobGraph($job: Int!, $depth: Int!, $side: Side, $health: Boolean = false,
    $incidents: Boolean = false) {
  jobLineageGraph(jobId: $job, depth: $depth, side: $side) {
    ${GRAPH_BODY}
  }
  ${INCIDENT_JOBS}
}`;

/** When the store's lineage history starts: its first edge (ids grow as edges are recorded). */
export const FIRST_RECORD = `query FirstRecord { edges(size: 1, includeRetired: true) { items { created } } }`;

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
    producers { id namespace name restricted latestRun { state } }
    consumers { id namespace name restricted latestRun { state } }
    health {
      state lastWrittenAt
      lastRun { runId state endedAt job { id name } }
      causes { runId state endedAt errorMessage job { id namespace name } }
    }
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

const JOB_REF = 'id namespace name restricted latestRun { state startedAt }';
const DATASET = 'kind nodeId namespace name at container { id name displayName }';

/** The side panel of a job: what it is, its runs, what it reads and writes. */
export const JOB_PANEL = `query JobPanel($id: Int!) {
  job(id: $id) {
    id namespace name restricted processingType integration jobType description owners sql
    sourceCodeLocation firstSeenAt lastSeenAt
    parent { id namespace name }
    inputs { ${DATASET} }
    outputs { ${DATASET} }
    runs(size: 20) { total items { runId state startedAt endedAt durationMs errorMessage } }
  }
}`;

/** The home page: the datastores, the failed runs and what they left stale, the job count. */
export const HOME = `query Home {
  datastores { id name type }
  incidents(first: 20) {
    items {
      state errorMessage at failedCount staleCount
      run { runId startedAt endedAt }
      job { ${JOB_REF} outputs { nodeId container { id name } } }
    }
  }
  jobCount: jobs(size: 1) { total }
}`;

/** The newest page of jobs (ids grow as jobs appear) and each datastore's counts. */
export function homeCounts(datastoreIds, jobPage, first = 0) {
  const parts = datastoreIds.map((id, i) => `c${first + i}: containers(datastoreId: ${Number(id)}, size: 1) { total }\n  j${first + i}: jobs(datastoreId: ${Number(id)}, size: 1) { total }`);
  // The recent jobs come with the first chunk only (a request holds at most 50 aliases).
  const recent = jobPage ? `recent: jobs(page: ${Number(jobPage)}, size: 100) { items { ${JOB_REF} lastSeenAt } }` : '';
  return `query HomeCounts {
  ${recent}
  ${parts.join('\n  ')}
}`;
}

/** A page of the change log (oldest first); a column edge's ends with their tables, so that
 * column changes can be told under their table pair. */
export const CHANGES = `query Changes($after: String, $first: Int!) {
  changes(after: $after, first: $first) {
    endCursor hasMore
    items { cursor kind at edgeId containerIds ${EDGE_CHANGE.replace(/^at /, '').replace(/ }$/, ` sourceFieldId targetFieldId
      sourceField { id name container { id name displayName } } targetField { id name container { id name displayName } } }`)} }
  }
}`;

/** What each failed run left behind (`runImpact`: distance 0 is what it should have written,
 * the rest is stale downstream), one alias per incident. */
export const INCIDENT_IMPACT_LIMIT = 50;
export function incidentImpacts(runIds) {
  const vars = runIds.map((_, i) => `$r${i}: String!`).join(', ');
  const parts = runIds.map((_, i) => `i${i}: runImpact(runId: $r${i}, limit: ${INCIDENT_IMPACT_LIMIT}) { isPartial containers { distance container { id name displayName } } }`);
  return `query IncidentImpacts(${vars}) {
  ${parts.join('\n  ')}
}`;
}

/** Only where the log ends (to find the newest changes without reading them all). */
export const CHANGE_CURSORS = `query ChangeCursors($after: String) {
  changes(after: $after, first: 1000) { endCursor hasMore items { cursor } }
}`;

/** The containers of one datastore (the home page's datastore entries). */
export const DATASTORE_CONTAINERS = `query DatastoreContainers($id: Int!) {
  containers(datastoreId: $id, size: 25) { total items { id name displayName database schema containerType } }
}`;

/** How A feeds B: the paths, each hop's edge and evidence. */
export const EXPLAIN = `query Explain($from: Int!, $to: Int!, $asOf: DateTime) {
  explainLineage(from: { containerId: $from }, to: { containerId: $to }, maxPaths: 5, asOf: $asOf) {
    reason isPartial
    paths {
      length nodeIds
      hops {
        sourceType operation firstObserved lastObserved
        edge { id sourceContainerId targetContainerId sourceContainer { name } targetContainer { name } }
        evidence { provider evidenceType authorship observedAt jobName runId }
      }
    }
  }
}`;

/** The fields of up to 20 containers, for the column view (their field edges then come from
 * `fieldEdges`, 40 fields a request). */
export const COLUMN_CONTAINERS = 20;
export function columns(containerIds) {
  const parts = containerIds.map((id, i) => `f${i}: containerFields(containerId: ${Number(id)}, size: 100) { total items { id name type hasLineage } }`);
  return `query Columns {
  ${parts.join('\n  ')}
}`;
}
