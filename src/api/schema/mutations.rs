//! `MutationRoot`: every mutation, whole in one object (the SDL lists them in this order). Each
//! maps its input to the service's, calls the service with the caller, and wraps the result.

use async_graphql::{Context, Json, MaybeUndefined, Object};

use super::{
    auth, caller, lineage, Container, ContainerInput, CreateEdgeInput, Datastore, DatastoreInput, GqlResult,
    IngestReport, LineageEdge, RecordLineageResult, SqlIngestReport, SqlStatementLineage, Team, TeamInput,
    UpdateEdgeInput,
};
use crate::domain::{
    ContainerInput as DomainContainerInput, DatastoreInput as DomainDatastoreInput, EdgePatch,
    FieldInput as DomainFieldInput, Id,
};
use crate::error::Error;
use crate::service::CreateEdge;

pub struct MutationRoot;

#[Object]
impl MutationRoot {
    async fn create_edge(&self, ctx: &Context<'_>, input: CreateEdgeInput) -> GqlResult<LineageEdge> {
        let e = lineage(ctx)
            .create_edge(
                caller(ctx),
                CreateEdge {
                    source_container_id: input.source_container_id,
                    source_field_id: input.source_field_id,
                    target_container_id: input.target_container_id,
                    target_field_id: input.target_field_id,
                    description: input.description,
                    source_type: input.source_type,
                    derived: input.derived,
                },
            )
            .await?;
        Ok(LineageEdge(e))
    }

    async fn update_edge(&self, ctx: &Context<'_>, id: Id, input: UpdateEdgeInput) -> GqlResult<LineageEdge> {
        let description = match input.description {
            MaybeUndefined::Undefined => None,
            MaybeUndefined::Null => Some(None),
            MaybeUndefined::Value(v) => Some(Some(v)),
        };
        let patch = EdgePatch { description, source_type: input.source_type };
        Ok(LineageEdge(lineage(ctx).update_edge(caller(ctx), id, patch).await?))
    }

    /// Provider-maintained edges are retired (kept, `retiredAt` set); others are deleted.
    async fn delete_edge(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_edge(caller(ctx), id).await?)
    }

    async fn upsert_datastore(&self, ctx: &Context<'_>, input: DatastoreInput) -> GqlResult<Datastore> {
        let d = lineage(ctx)
            .upsert_datastore(
                caller(ctx),
                DomainDatastoreInput {
                    name: input.name,
                    kind: input.kind,
                    store_type: input.store_type,
                    namespaces: input.namespaces,
                    enrichment_only: input.enrichment_only,
                },
            )
            .await?;
        Ok(Datastore(d))
    }

    async fn upsert_container(&self, ctx: &Context<'_>, input: ContainerInput) -> GqlResult<Container> {
        let c = lineage(ctx)
            .upsert_container(
                caller(ctx),
                DomainContainerInput {
                    datastore_id: input.datastore_id,
                    name: input.name,
                    database: input.database,
                    schema: input.schema,
                    container_type: input.container_type,
                    table_type: input.table_type,
                    display_name: input.display_name,
                    purpose: input.purpose,
                    active_anomaly_count: input.active_anomaly_count,
                    description: input.description,
                    tags: input.tags,
                    owners: input.owners,
                    fields: input
                        .fields
                        .into_iter()
                        .map(|f| DomainFieldInput {
                            name: f.name,
                            data_type: f.data_type,
                            display_name: f.display_name,
                            status: f.status,
                            latest_profile_id: f.latest_profile_id,
                            is_computed_field: f.is_computed_field,
                            active_anomaly_count: f.active_anomaly_count,
                        })
                        .collect(),
                },
            )
            .await?;
        Ok(Container::today(c))
    }

    async fn delete_container(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_container(caller(ctx), id).await?)
    }

    async fn delete_field(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_field(caller(ctx), id).await?)
    }

    async fn delete_datastore(&self, ctx: &Context<'_>, id: Id) -> GqlResult<bool> {
        Ok(lineage(ctx).delete_datastore(caller(ctx), id).await?)
    }

    /// Records an external engine's table lineage (as `POST /v1/api/lineage`): CTAS, VIEW and semantic views
    /// replace the target's sources, any other operation adds; `operation` defaults to EXTERNAL.
    async fn record_lineage(
        &self,
        ctx: &Context<'_>,
        target: String,
        #[graphql(default)] sources: Option<Vec<String>>,
        operation: Option<String>,
    ) -> GqlResult<RecordLineageResult> {
        let sources = sources.unwrap_or_default();
        let r = lineage(ctx).record_external(caller(ctx), &target, &sources, operation.as_deref()).await?;
        Ok(RecordLineageResult {
            status: "ok".into(),
            operation: crate::service::external::normalize_operation(operation.as_deref()),
            edges_created: r.summary.edges_created,
            edges_asserted: r.summary.edges_asserted,
            edges_retired: r.summary.edges_retired,
            unresolved: r.unresolved,
        })
    }

    /// Records the lineage SQL statements imply, as edges of the datastore's type (CTAS and
    /// VIEW replace the target's sources, INSERT and MERGE add to them).
    async fn ingest_sql(
        &self,
        ctx: &Context<'_>,
        statements: Vec<String>,
        dialect: String,
        datastore_id: Id,
        job: Option<super::inputs::SqlJobInput>,
    ) -> GqlResult<SqlIngestReport> {
        let job = job.map(|j| crate::service::jobs::SqlJob { namespace: j.namespace, name: j.name, run_id: j.run_id });
        let r = lineage(ctx).ingest_sql_as_job(caller(ctx), statements, &dialect, datastore_id, job).await?;
        let failed = r.statements.iter().filter(|s| !s.errors.is_empty()).count() as i64;
        Ok(SqlIngestReport {
            operation_id: r.operation_id,
            statements: r.statements.into_iter().map(SqlStatementLineage::from).collect(),
            recorded: r.recording.recorded as i64,
            failed,
            unresolved: r.recording.unresolved.into_iter().collect(),
            run_id: r.run_id,
        })
    }

    /// Creates or replaces a team: members (user names) and per-datastore permissions. ADMIN only.
    async fn upsert_team(&self, ctx: &Context<'_>, input: TeamInput) -> GqlResult<Team> {
        let team = crate::auth::Team {
            name: input.name,
            members: input.members,
            permissions: input
                .permissions
                .into_iter()
                .map(|p| crate::auth::TeamPermission { datastore_id: p.datastore_id, permission: p.permission.into() })
                .collect(),
        };
        Ok(Team::from(auth(ctx).upsert_team(caller(ctx), team).await?))
    }

    /// Applies OpenLineage events (at most 1,000), as `POST /api/v1/lineage` does, within the same
    /// limit on concurrent ingest: past it, the error's code is `OVERLOADED`.
    async fn ingest_open_lineage(
        &self,
        ctx: &Context<'_>,
        events: Vec<Json<serde_json::Value>>,
    ) -> GqlResult<IngestReport> {
        let limits = crate::ingest::openlineage::Limits::default();
        if events.len() > limits.max_events {
            return Err(Error::BadInput(format!(
                "{} events sent; at most {} are accepted at once",
                events.len(),
                limits.max_events
            ))
            .into());
        }
        let events: Vec<serde_json::Value> = events.into_iter().map(|e| e.0).collect();
        for (i, e) in events.iter().enumerate() {
            crate::ingest::openlineage::check_value(e, &limits).map_err(|err| {
                let m = match err {
                    crate::ingest::openlineage::BodyError::TooLarge(m)
                    | crate::ingest::openlineage::BodyError::BadRequest(m) => m,
                };
                Error::BadInput(format!("events[{i}]: {m}"))
            })?;
        }
        // The REST routes' gate; absent when the schema runs outside the HTTP server.
        let _slot = match ctx.data_opt::<crate::api::pushback::IngestGate>() {
            Some(gate) => Some(gate.enter().await.map_err(|r| Error::Overloaded(r.message()))?),
            None => None,
        };
        let report = lineage(ctx).ingest_openlineage(caller(ctx), events).await?;
        Ok(IngestReport::from(report))
    }
}
