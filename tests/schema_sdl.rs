//! `schema.graphql` is generated from the code: this fails when it is stale.

#![allow(clippy::unwrap_used)]

#[test]
fn schema_graphql_is_current() {
    let sdl = tributary::api::schema::build_schema().sdl();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.graphql");
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(on_disk == sdl, "schema.graphql is stale: regenerate it with `cargo run -- schema > schema.graphql`");
}

#[test]
fn contract_operations_exist() {
    let sdl = tributary::api::schema::build_schema().sdl();
    for needle in [
        "edge(id: Int!, asOf: DateTime): LineageEdge",
        "edges(containerId: Int, fieldId: Int, sourceType: String, includeRetired: Boolean = false, page: Int = 1, size: Int = 50, asOf: DateTime): EdgePage!",
        "lineageGraph(containerId: Int!, depth: Int = 2, side: Side, asOf: DateTime, maxNodes: Int, includeJobs: Boolean = false): LineageGraph!",
        "jobs(namespace: String, name: String, lastRunState: RunState, datastoreId: Int, page: Int = 1, size: Int = 50): JobPage!",
        "job(id: Int, namespace: String, name: String): Job",
        "run(runId: String!): Run",
        "enum RunState {\n\tSTART\n\tRUNNING\n\tCOMPLETE\n\tFAIL\n\tABORT\n\tOTHER\n}",
        "enum HealthState {",
        "runImpact(runId: String!, depth: Int = 20, limit: Int = 10000): Impact!",
        "incidents(since: DateTime, until: DateTime, first: Int = 50, after: String): IncidentPage!",
        "jobLineageGraph(jobId: Int!, depth: Int = 2, side: Side, asOf: DateTime): LineageGraph!",
        "explainLineage(from: EndInput!, to: EndInput!, maxPaths: Int = 3, maxDepth: Int = 20, asOf: DateTime): LineageExplanation!",
        "lineageSummary(containerId: Int!, depth: Int = 2, side: Side): LineageSummary!",
        "input EndInput {\n\tcontainerId: Int\n\tfieldId: Int\n}",
        "containerFields(containerId: Int!, name: String, page: Int = 1, size: Int = 50): FieldPage!",
        "fieldConnections(fieldId: Int!, containerIds: [Int!], asOf: DateTime): FieldConnections!",
        "impact(containerId: Int!, depth: Int = 20, side: Side = DOWNSTREAM, limit: Int = 10000, asOf: DateTime): Impact!",
        "createEdge(input: CreateEdgeInput!): LineageEdge!",
        "updateEdge(id: Int!, input: UpdateEdgeInput!): LineageEdge!",
        "deleteEdge(id: Int!): Boolean!",
        "lineageDiff(containerId: Int!, depth: Int = 2, side: Side, from: DateTime!, to: DateTime): LineageDiff!",
    ] {
        assert!(sdl.contains(needle), "the SDL lacks `{needle}`");
    }
}
