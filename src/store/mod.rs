//! The storage trait and its two implementations: the embedded store (SQLite, the default) and
//! Neo4j. This is the only code that talks to a database.
//!
//! The trait offers batched reads (many keys, one statement) so data loaders and level-by-level
//! traversal cost a bounded number of statements, and coarse writes that each run in one
//! transaction. Business rules (which edges retire, the auto container edge) live in
//! `domain`/`service`; a store applies what it is told and enforces only uniqueness.
//!
//! # How it fits
//!
//! The `Store` trait is the only way to reach a database. It is declared once, by `store_trait!`, from two lists:
//! `by_hand` (`kind`, `session`, `export`, `import`, `import_chunks`) and `limited` (everything else). The same
//! invocation hands the `limited` list to `timeout::limit_store_methods!`, which writes `TimeoutStore`'s
//! implementation: each of those methods runs the inner store's within the limit and records
//! `tributary_store_call_duration_seconds` under its name. So a new method is written in the trait and the two stores,
//! never forwarded by hand. Its reads are batched: they take many ids and cost one statement. Its writes are coarse,
//! and each is one transaction. A store enforces only uniqueness. It applies what the service decides and holds no
//! business rules. Beside the catalog, edges and traversal, it has:
//! - **Provider assertions.** `apply_assertions(batch, now)`, in one transaction: upsert the batch's metadata; for each
//!   assertion create its edge (keyed by source, target and source type) or revive it when retired (a new live
//!   interval), raise `last_asserted_at` and upsert its evidence row live; retire the listed evidence rows; then retire
//!   each candidate edge that no live evidence backs any more, closing its interval. The embedded store reads the
//!   asserted edges and their evidence in two statements for the whole batch, and writes a live edge's and an existing
//!   evidence row's unindexed columns in place. Also `evidence_by_keys`, `live_evidence_of_key` (a job's live evidence
//!   and its edges; retired evidence, which piles up as a job's inputs change, is not read) and
//!   `live_edges_touching_ends`.
//! - **The event log.** `insert_event` / `insert_events` (return the existing event for a known fingerprint),
//!   `finish_event` / `finish_events`, `list_events`, `run_event_states` (id, status and type of a run's events, for
//!   the START-after-FAIL rule), `events_after` (replay), `purge_events` (retention).
//! - **Sessions.** `session()` returns a view whose calls share one transaction, committed by `commit_session()` on it
//!   (the embedded store: the writer's transaction; Neo4j: one explicit transaction, `store/neo4j/session.rs`, that
//!   every call of the view, reads included, runs in). `session_conflicts()` says whether a concurrent writer can fail
//!   a session (Neo4j).
//! - **Metadata.** `put_metadata` (keyed by container, field, attribute and source; `asserted_at` moves only when the
//!   value changes) and `metadata_for_container`.
//! - **Documents.** `put_doc`, `get_doc`, `list_docs`: small JSON values by kind and key.
//! - `export` / `import` of `Record`s (one line of `tributary export` each, events, metadata and documents included).
//!   `import_chunks` is `import` fed from a channel a chunk at a time (the same checks and all-or-nothing outcome; the
//!   embedded store's writer thread waits for each chunk inside its one transaction): `tributary-bench --size xlarge`
//!   loads 23 million records through it without ever holding them all, which as one `Vec<Record>` would take over 10
//!   GiB. `StoreError` is `NotFound | Conflict | Invalid | Unavailable | Internal`.

pub mod neo4j;
pub mod schema_version;
pub mod sqlite;
pub mod timeout;

use std::collections::HashMap;

use async_trait::async_trait;

use crate::domain::{
    AssertionBatch, AssertionSummary, Change, Container, ContainerInput, ContainerStats, Datastore, DatastoreInput,
    Direction, Edge, EdgeFilter, EdgePatch, End, EventFilter, EventOutcome, Evidence, Field, Id, NewEdge, Page,
    PageRequest, StoredEvent, Timestamp,
};

/// Ends by kind, each list distinct and sorted: container ids, field ids, external fqns (for
/// statements that look each kind up through its own index).
pub(crate) fn ends_by_kind(ends: &[crate::domain::End]) -> (Vec<Id>, Vec<Id>, Vec<String>) {
    use std::collections::BTreeSet;
    let (mut containers, mut fields, mut fqns) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for end in ends {
        match end {
            crate::domain::End::Container { id } => containers.insert(*id),
            crate::domain::End::Field { id, .. } => fields.insert(*id),
            crate::domain::End::External { fqn } => fqns.insert(fqn.clone()),
        };
    }
    (containers.into_iter().collect(), fields.into_iter().collect(), fqns.into_iter().collect())
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store error: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// The answer of a store that does not offer an operation yet (the provider-assertion and
/// event-log methods have defaults so a store can adopt them one at a time).
fn not_supported(store: &str) -> StoreError {
    StoreError::Internal(format!("the {store} store does not support this operation yet"))
}

/// The chunks of records `Store::import_chunks` loads, until the sender is dropped.
pub type RecordChunks = tokio::sync::mpsc::Receiver<Vec<Record>>;

/// One line of `tributary export`: the whole store as records, in an order `import` can replay.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    Datastore(Datastore),
    Container(Container),
    Field(Field),
    Edge(Edge),
    Evidence(Evidence),
    Event(StoredEvent),
    Metadata(crate::domain::MetadataAssertion),
    Job(crate::domain::Job),
    Run(crate::domain::Run),
    /// A dataset a job read or wrote (`job_io`).
    JobIo {
        job_id: Id,
        entry: crate::domain::IoEntry,
    },
    /// A dataset a run (by the store's run id) read or wrote (`run_io`).
    RunIo {
        run_id: Id,
        entry: crate::domain::IoEntry,
    },
    /// Users, API tokens (hashed) and teams: small documents keyed by kind and key.
    Doc {
        kind: String,
        key: String,
        value: serde_json::Value,
    },
}

/// One live evidence row of an OpenLineage job, as the next event of the job needs it: see
/// [`Store::live_evidence_of_key`].
#[derive(Debug, Clone, PartialEq)]
pub struct PriorEvidence {
    pub edge_id: Id,
    pub key: String,
    /// The `runId` and `firstRunId` text of the evidence's details, when there.
    pub run_id: Option<String>,
    pub first_run_id: Option<String>,
    /// The edge's source and target keys (`End::key`); `None` when the edge is gone.
    pub ends: Option<(String, String)>,
}

impl PriorEvidence {
    /// From a whole evidence row and its edge (if found).
    pub fn of(e: &Evidence, edge: Option<&Edge>) -> PriorEvidence {
        let text = |k: &str| e.details.as_ref().and_then(|d| d.get(k)).and_then(|v| v.as_str()).map(str::to_string);
        PriorEvidence {
            edge_id: e.edge_id,
            key: e.key.clone(),
            run_id: text("runId"),
            first_run_id: text("firstRunId"),
            ends: edge.map(|edge| (edge.source.key(), edge.target.key())),
        }
    }
}

/// What a chunk of OpenLineage events records about jobs and runs: see [`Store::look_up_runs`].
/// Each list distinct.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkJobs {
    /// The events' own jobs (whose datasets `record_run` merges into).
    pub jobs: Vec<crate::domain::JobName>,
    /// Their parent and root jobs that are not among `jobs`.
    pub related: Vec<crate::domain::JobName>,
    /// The events' runIds.
    pub run_ids: Vec<String>,
}

/// The containers of a lineage graph and what its traversal already read: see
/// [`Store::container_graph_around`].
#[derive(Debug, Clone, Default)]
pub struct GraphScope {
    /// The graph's containers.
    pub ids: Vec<Id>,
    /// Edges to or from external assets that the answer already holds.
    pub known_external_edges: Vec<Id>,
    /// Containers whose every live container-level edge in (upstream) the caller read.
    pub inbound_read: Vec<Id>,
    /// Containers whose every live container-level edge out (downstream) the caller read.
    pub outbound_read: Vec<Id>,
}

impl GraphScope {
    /// What a store still has to read around the graph: the containers whose outgoing edges
    /// the traversal did not read (the sources of the edges left, tested downstream) and those
    /// whose incoming edges it did not read (the targets, tested upstream), in `ids` order.
    pub fn unread(&self) -> (Vec<Id>, Vec<Id>) {
        let not_in = |read: &[Id]| -> Vec<Id> {
            let read: std::collections::HashSet<Id> = read.iter().copied().collect();
            self.ids.iter().copied().filter(|id| !read.contains(id)).collect()
        };
        (not_in(&self.outbound_read), not_in(&self.inbound_read))
    }
}

/// See [`Store::container_graph_around`].
#[derive(Debug, Clone, Default)]
pub struct GraphAround {
    /// Live container-to-container edges with both ends among the ids, ordered by id (those into
    /// an `inbound_read` or out of an `outbound_read` container may be left out).
    pub edges: Vec<Edge>,
    /// The ids with a live edge from outside (upstream), in any order, possibly repeated.
    pub has_upstream: Vec<Id>,
    /// The ids with a live edge to outside (downstream).
    pub has_downstream: Vec<Id>,
}

impl GraphAround {
    /// What a graph shows around `scope.ids` from the edges into them (`upstream`) and out of
    /// them (`downstream`): every one, or at least those into the targets and out of the sources
    /// of `scope.unread()`. For stores and reads (a past instant's edges) with no cheaper way.
    pub fn of_edges(scope: &GraphScope, upstream: Vec<Edge>, downstream: Vec<Edge>) -> GraphAround {
        let inside: std::collections::HashSet<Id> = scope.ids.iter().copied().collect();
        let known: std::collections::HashSet<Id> = scope.known_external_edges.iter().copied().collect();
        let outside = |e: &Edge, end: &crate::domain::End| match end {
            crate::domain::End::Container { id } => !inside.contains(id),
            _ => !known.contains(&e.id),
        };
        let has_upstream =
            upstream.iter().filter(|e| outside(e, &e.source)).filter_map(|e| e.target.container_id()).collect();
        let has_downstream =
            downstream.iter().filter(|e| outside(e, &e.target)).filter_map(|e| e.source.container_id()).collect();
        let edges = downstream
            .into_iter()
            .filter(|e| matches!(e.target, crate::domain::End::Container { id } if inside.contains(&id)))
            .collect();
        GraphAround { edges, has_upstream, has_downstream }
    }
}

/// Declares the [`Store`] trait from one list of methods and hands the `limited` ones to
/// [`timeout::limit_store_methods`], which writes `TimeoutStore`'s delegation for each. So a new
/// store method is written in the list below and in the two stores, and it is time-limited and
/// metered without more code. `by_hand` methods are declared as written; `TimeoutStore` writes
/// its own (see there). Every method takes `&self` and a limited one returns a `StoreResult`;
/// the `&$self` capture keeps default bodies' `self` in the caller's hygiene.
macro_rules! store_trait {
    (
        by_hand { $($by_hand:tt)* }
        limited {
            $(
                $(#[$attr:meta])*
                async fn $name:ident(&$self:ident $(, $arg:ident: $ty:ty)* $(,)?) -> StoreResult<$ok:ty> $body:tt
            )*
        }
    ) => {
        #[async_trait]
        pub trait Store: Send + Sync + 'static {
            $($by_hand)*
            $(
                $(#[$attr])*
                async fn $name(&$self $(, $arg: $ty)*) -> StoreResult<$ok> $body
            )*
        }

        timeout::limit_store_methods! { $( fn $name($($arg: $ty),*) -> $ok; )* }
    };
}

store_trait! {
    // TimeoutStore writes these itself: `kind` is the inner store's, a session is wrapped in the
    // limit too, and `export`/`import` are not limited (see store/timeout.rs).
    by_hand {
        /// `embedded` or `neo4j`; the `store` label of `tributary_store_queries_total`.
        fn kind(&self) -> &'static str;

        /// A view of the store whose calls all run in one transaction (reads see its writes; a
        /// write that fails is undone alone where the store can, else it fails the session and
        /// nothing of it commits), made durable by `commit_session` on the view and
        /// rolled back when the view is dropped uncommitted. `None` where the store offers none (or
        /// this already is a session): then each call commits on its own.
        async fn session(&self) -> StoreResult<Option<std::sync::Arc<dyn Store>>> {
            Ok(None)
        }

        /// Whether a concurrent writer can fail a session of this store as a whole (Neo4j breaks
        /// a deadlock between two transactions by failing one; it has no savepoints, so any
        /// failed call fails the session): then a caller keeps what it needs to run the work
        /// again without a session, where each write is retried alone, and keeps sessions short,
        /// as they hold their locks until the commit. The embedded store's session holds the
        /// only writer, so nothing else can fail it.
        fn session_conflicts(&self) -> bool {
            false
        }

        // ---- whole store ----
        async fn export(&self) -> StoreResult<Vec<Record>>;
        /// Loads records into an empty store, keeping their ids. `Invalid` when the store is not empty.
        async fn import(&self, records: Vec<Record>) -> StoreResult<usize>;
        /// `import` of the concatenation of the chunks received, in `export`'s order: a store too
        /// big to hold as one `Vec` is loaded a chunk at a time. `Invalid` when the store is not
        /// empty; a failure leaves it as it was, as `import` does. By default the chunks are
        /// gathered and imported at once.
        async fn import_chunks(&self, mut chunks: RecordChunks) -> StoreResult<usize> {
            let mut records = Vec::new();
            while let Some(chunk) = chunks.recv().await {
                records.extend(chunk);
            }
            self.import(records).await
        }
    }
    // TimeoutStore gives each of these the time limit and the per-call metric.
    limited {
        /// Readiness: the database answers.
        async fn ping(&self) -> StoreResult<()>;
        /// Commits the work of the session this view is; elsewhere nothing to do.
        async fn commit_session(&self) -> StoreResult<()> {
            Ok(())
        }

        // ---- catalog ----
        /// Creates or updates the datastore named `input.name`.
        async fn upsert_datastore(&self, input: DatastoreInput) -> StoreResult<Datastore>;
        async fn datastores_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Datastore>>;
        async fn list_datastores(&self) -> StoreResult<Vec<Datastore>>;
        /// Removes the datastore and its containers and fields (see `delete_container`). The caller
        /// has already retired or deleted their edges. Returns false when it did not exist.
        async fn delete_datastore(&self, id: Id) -> StoreResult<bool>;

        /// Creates or updates the container keyed by (datastore, `database.schema.name`); fields are
        /// merged by name (listed ones created or updated, unlisted ones kept). `NotFound` when the
        /// datastore does not exist. Unset optional inputs keep their stored value on update and take
        /// the contract's defaults on create.
        async fn upsert_container(&self, input: ContainerInput) -> StoreResult<(Container, Vec<Field>)>;
        async fn containers_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Container>>;
        /// `(id, name)` of the live containers among `ids`: what an answer that shows only
        /// containers' names needs (an `impact` of thousands), without the rest of each.
        async fn container_names_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<(Id, String)>> {
            Ok(self.containers_by_ids(ids).await?.into_iter().map(|c| (c.id, c.name)).collect())
        }
        /// Containers ordered by id; `name` is a case-insensitive (Unicode) substring of the
        /// qualified name `database.schema.name` (so of the name too).
        async fn list_containers(
            &self,
            datastore_id: Option<Id>,
            name: Option<&str>,
            page: PageRequest,
        ) -> StoreResult<Page<Container>>;
        /// Live containers whose name, lowercased (Rust's Unicode `to_lowercase`), is one of `names`
        /// (given lowercased), in the `datastores` listed or in all when `None`; ordered by id. One
        /// indexed statement whatever the number of names: the name matcher of the providers.
        async fn containers_by_names(&self, names: &[String], datastores: Option<&[Id]>) -> StoreResult<Vec<Container>>;
        /// Search (`service::search`): up to `limit` live containers whose qualified name
        /// (`database.schema.name`, lowercased) contains `needle` (given lowercased), in the
        /// `datastores` listed or in all; an exact qualified name first, then those it starts,
        /// then the rest, shorter names first within each.
        async fn search_containers(
            &self,
            needle: &str,
            datastores: Option<&[Id]>,
            limit: usize,
        ) -> StoreResult<Vec<Container>>;
        /// Search: up to `limit` live fields whose `table.column` or `database.schema.table.column`
        /// (lowercased) contains `needle`, ranked as `search_containers`.
        async fn search_fields(&self, needle: &str, datastores: Option<&[Id]>, limit: usize) -> StoreResult<Vec<Field>>;
        /// Search: up to `limit` assets outside the catalog, as `(fqn, source type)` of a live edge
        /// naming them, whose fqn (lowercased) contains `needle`; ranked as `search_containers`.
        async fn search_externals(&self, needle: &str, limit: usize) -> StoreResult<Vec<(String, String)>>;
        /// Removes a container and its fields from the catalog. Deleted containers and fields are
        /// never returned again, but retired edges keep their ids. Returns false when it did not exist.
        async fn delete_container(&self, id: Id) -> StoreResult<bool>;
        async fn fields_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Field>>;
        /// Every live field of the given containers, ordered by id, in one read (the services' field
        /// name caches).
        async fn fields_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<Field>>;
        /// `(container id, field id, name)` of the same fields in the same order: what resolving
        /// column names needs, without the rest of each field.
        async fn field_names_of_containers(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
            Ok(self.fields_of_containers(ids).await?.into_iter().map(|f| (f.container_id, f.id, f.name)).collect())
        }
        /// `(container id, field id, name)` of the live fields among `ids`: what an answer that
        /// shows only fields' names needs (a `piiFlow` of thousands), without the rest of each.
        async fn field_names_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<(Id, Id, String)>> {
            Ok(self.fields_by_ids(ids).await?.into_iter().map(|f| (f.container_id, f.id, f.name)).collect())
        }
        /// Fields of a container ordered by id; `name` is a case-insensitive (Unicode) substring match.
        async fn container_fields(
            &self,
            container_id: Id,
            name: Option<&str>,
            page: PageRequest,
        ) -> StoreResult<Page<Field>>;
        async fn delete_field(&self, id: Id) -> StoreResult<bool>;
        /// Field count and the number of fields with a live field edge, per container.
        async fn container_stats(&self, ids: &[Id]) -> StoreResult<Vec<ContainerStats>>;
        /// The live field count alone, per container with at least one live field: what a graph's
        /// `fieldCount` needs, without `container_stats`' look at every field's edges.
        async fn field_counts(&self, ids: &[Id]) -> StoreResult<Vec<(Id, i64)>>;
        /// The subset of `ids` that have at least one live field edge.
        async fn fields_with_lineage(&self, ids: &[Id]) -> StoreResult<Vec<Id>>;

        // ---- edges ----
        /// Creates the edges in one transaction, in order. An edge whose (source, target,
        /// sourceType) already exists (live or retired) fails the whole call with `Conflict`, unless
        /// `skip_existing`, in which case it is left out of the result.
        async fn create_edges(&self, edges: Vec<NewEdge>, skip_existing: bool, now: Timestamp) -> StoreResult<Vec<Edge>>;
        /// Whether a live container-level edge of any source type joins the two containers.
        async fn live_container_edge_exists(&self, source: Id, target: Id) -> StoreResult<bool>;
        /// `Conflict` when a new source type collides with an existing edge; `Ok(None)` for an
        /// unknown id.
        async fn update_edge(&self, id: Id, patch: EdgePatch) -> StoreResult<Option<Edge>>;
        /// Sets `retired_at`, closes the open live interval, and retires the edges' evidence.
        async fn retire_edges(&self, ids: &[Id], now: Timestamp) -> StoreResult<()>;
        /// Removes the edges and their evidence.
        async fn delete_edges(&self, ids: &[Id]) -> StoreResult<()>;
        async fn edges_by_ids(&self, ids: &[Id]) -> StoreResult<Vec<Edge>>;
        /// Edges ordered by id. `container_id` matches container ends, `field_id` field ends.
        async fn list_edges(&self, filter: &EdgeFilter, page: PageRequest) -> StoreResult<Page<Edge>>;
        /// Every edge (live or retired) with an end on one of these containers or on one of their
        /// fields: what deleting the containers affects.
        async fn edges_touching_containers(&self, ids: &[Id]) -> StoreResult<Vec<Edge>>;
        /// Every edge with an end on one of these fields.
        async fn edges_touching_fields(&self, ids: &[Id]) -> StoreResult<Vec<Edge>>;
        async fn evidence_for_edges(&self, edge_ids: &[Id]) -> StoreResult<Vec<Evidence>>;
        /// Adds or replaces evidence rows, keyed by (edge id, key).
        async fn put_evidence(&self, evidence: Vec<Evidence>) -> StoreResult<()>;

        // ---- traversal: one statement per call, whatever the number of ids ----
        /// Live container-level edges (the other end a container or an external asset) whose target
        /// (`Upstream`) or source (`Downstream`) is one of `ids`.
        async fn container_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>>;
        /// Live field-level edges whose target (`Upstream`) or source (`Downstream`) is one of `ids`.
        async fn field_edges_of(&self, ids: &[Id], direction: Direction) -> StoreResult<Vec<Edge>>;
        /// Container-level edges (the other end a container or an external asset) live at one of
        /// `at` (`Edge::live_at`; retired since, deleted ends included) whose target (`Upstream`)
        /// or source (`Downstream`) is one of `ids`: a level of a traversal as of a past instant,
        /// or of two at once (a diff, which tells them apart with `Edge::live_at`). The store
        /// tests liveness where the edges lie and returns only those live then.
        async fn container_edges_live_at(
            &self,
            ids: &[Id],
            direction: Direction,
            at: &[Timestamp],
        ) -> StoreResult<Vec<Edge>>;
        /// Field-level edges live at one of `at` whose target (`Upstream`) or source
        /// (`Downstream`) is one of `ids`, as `container_edges_live_at`.
        async fn field_edges_live_at(&self, ids: &[Id], direction: Direction, at: &[Timestamp]) -> StoreResult<Vec<Edge>>;
        /// Container-to-container edges live at one of `at` from one of `sources` to one of
        /// `targets` (deleted ends included): `container_graph_around`'s edges as of a past
        /// instant (or two), for a caller that holds what its traversal read.
        async fn container_edges_within_at(
            &self,
            sources: &[Id],
            targets: &[Id],
            at: &[Timestamp],
        ) -> StoreResult<Vec<Edge>>;
        /// `container_graph_around`'s flags as of `at`: which of the scope's unread targets have
        /// an edge live then from outside `scope.ids` (a container, deleted or not, or an
        /// external asset by an edge not in `known_external_edges`), and which of its unread
        /// sources one to outside; `(upstream, downstream)`, in any order, possibly repeated.
        /// Without reading a hub's fan-out: each stops at the first such edge.
        async fn container_edge_flags_at(&self, scope: &GraphScope, at: Timestamp) -> StoreResult<(Vec<Id>, Vec<Id>)>;
        /// The earliest `created` of any edge: before it the store knows nothing. `None` when empty.
        async fn first_edge_created(&self) -> StoreResult<Option<Timestamp>>;
        /// Per id of `ids`, how many distinct live neighbours lie `direction` of it outside
        /// `exclude` (field edges when `over_fields`, else container-level edges, external assets
        /// counted): what a traversal's frontier reports beyond it. A count, no edge read in full.
        async fn count_neighbours(
            &self,
            ids: &[Id],
            direction: Direction,
            over_fields: bool,
            exclude: &[Id],
        ) -> StoreResult<Vec<(Id, i64)>>;

        /// What a lineage graph over these containers shows beyond its traversal, without reading the
        /// edges around them in full (a hub's fan-out can be thousands of edges): the live
        /// container-to-container edges with both ends in `ids`, and which of `ids` have a live
        /// container-level edge upstream (downstream) to something outside: a container not in `ids`,
        /// or an external asset by an edge not in `known_external_edges`. Two statements at most.
        /// What the traversal read need not be read again: edges into `inbound_read` containers and
        /// out of `outbound_read` ones may be left out of `edges`, and those containers left
        /// unflagged upstream (downstream), as the caller holds their edges that way.
        async fn container_graph_around(&self, scope: &GraphScope) -> StoreResult<GraphAround> {
            let upstream = self.container_edges_of(&scope.ids, Direction::Upstream).await?;
            let downstream = self.container_edges_of(&scope.ids, Direction::Downstream).await?;
            Ok(GraphAround::of_edges(scope, upstream, downstream))
        }

        // ---- provider assertions (OpenLineage, SQL capture) ----
        /// Applies a batch in one transaction: each assertion creates its edge (keyed by source,
        /// target, sourceType) or revives it when retired (a new live interval), raises
        /// `last_asserted_at`, and upserts its evidence row live; then the listed evidence rows are
        /// retired; then each candidate edge with no live evidence left is retired (its interval
        /// closed). Any failure changes nothing.
        async fn apply_assertions(&self, _batch: AssertionBatch, _now: Timestamp) -> StoreResult<AssertionSummary> {
            Err(not_supported(self.kind()))
        }
        /// `apply_assertions`, and the id of each assertion's edge, in the batch's order (what an
        /// OpenLineage chunk's prior state needs to follow its evidence from event to event:
        /// `service::openlineage::prior`). A store that cannot tell gives no ids, and the caller
        /// then reads the evidence of the keys the batch touched again.
        async fn apply_assertions_with_ids(
            &self,
            batch: AssertionBatch,
            now: Timestamp,
        ) -> StoreResult<(AssertionSummary, Vec<Id>)> {
            Ok((self.apply_assertions(batch, now).await?, Vec::new()))
        }
        /// Upserts metadata values by (container, field, attribute, source) in one transaction:
        /// `asserted_at` moves only when the value changes; `observed_at`, provider and details
        /// always take the new row's.
        async fn put_metadata(&self, _rows: Vec<crate::domain::MetadataAssertion>) -> StoreResult<()> {
            Err(not_supported(self.kind()))
        }
        /// Every metadata row of a container and of its fields.
        async fn metadata_for_container(&self, _container_id: Id) -> StoreResult<Vec<crate::domain::MetadataAssertion>> {
            Err(not_supported(self.kind()))
        }
        /// The containers' own metadata rows (not their fields'), every source's, for many
        /// containers in one read: what `Container.description`, `owners` and `tags` need.
        async fn container_metadata_of(&self, _ids: &[Id]) -> StoreResult<Vec<crate::domain::MetadataAssertion>> {
            Err(not_supported(self.kind()))
        }
        /// A new import operation id (an `ingestSql` call, a query-log import, a `recordLineage`
        /// call): increasing, never reused, past any id an imported store's evidence carries.
        async fn next_operation_id(&self) -> StoreResult<Id> {
            Err(not_supported(self.kind()))
        }
        /// Evidence rows (live or retired) with one of these keys.
        async fn evidence_by_keys(&self, _keys: &[String]) -> StoreResult<Vec<Evidence>> {
            Err(not_supported(self.kind()))
        }
        /// The live evidence with this key, by edge id, with the ends of the edges it backs (an
        /// OpenLineage job's lineage so far). Retired evidence, which piles up as a job's inputs
        /// change, is left unread; so is what the next event does not use (the rest of the
        /// details, the edges' other columns).
        async fn live_evidence_of_key(&self, key: &str) -> StoreResult<Vec<PriorEvidence>> {
            let live: Vec<Evidence> =
                self.evidence_by_keys(&[key.to_string()]).await?.into_iter().filter(|e| e.retired_at.is_none()).collect();
            let edges: HashMap<Id, Edge> = self
                .edges_by_ids(&live.iter().map(|e| e.edge_id).collect::<Vec<_>>())
                .await?
                .into_iter()
                .map(|e| (e.id, e))
                .collect();
            Ok(live.iter().map(|e| PriorEvidence::of(e, edges.get(&e.edge_id))).collect())
        }
        /// `live_evidence_of_key` of each of these keys, in one read: by key in the given order,
        /// then by edge id (a chunk of OpenLineage events reads its jobs' lineage so far at once).
        async fn live_evidence_of_keys(&self, keys: &[String]) -> StoreResult<Vec<PriorEvidence>> {
            let mut out = Vec::new();
            for key in keys {
                out.extend(self.live_evidence_of_key(key).await?);
            }
            Ok(out)
        }
        /// Live edges of this source type with an end on one of these ends (for DROP and RENAME).
        async fn live_edges_touching_ends(
            &self,
            _ends: &[crate::domain::End],
            _source_type: &str,
        ) -> StoreResult<Vec<Edge>> {
            Err(not_supported(self.kind()))
        }

        // ---- the event log ----
        /// Stores an event as received. When an event with the same fingerprint exists, nothing is
        /// written and the existing one is returned with `true`.
        async fn insert_event(&self, _event: StoredEvent) -> StoreResult<(StoredEvent, bool)> {
            Err(not_supported(self.kind()))
        }
        /// Records the outcome of applying a stored event.
        async fn finish_event(
            &self,
            _id: Id,
            _status: &str,
            _errors: serde_json::Value,
            _summary: serde_json::Value,
        ) -> StoreResult<()> {
            Err(not_supported(self.kind()))
        }
        /// Stores a request's events in one transaction, in order, each as `insert_event` would
        /// (an event whose fingerprint an earlier one in the list has is that one's duplicate).
        async fn insert_events(&self, events: Vec<StoredEvent>) -> StoreResult<Vec<(StoredEvent, bool)>> {
            let mut out = Vec::with_capacity(events.len());
            for e in events {
                out.push(self.insert_event(e).await?);
            }
            Ok(out)
        }
        /// Records several events' outcomes in one transaction.
        async fn finish_events(&self, outcomes: Vec<EventOutcome>) -> StoreResult<()> {
            for o in outcomes {
                self.finish_event(o.id, &o.status, o.errors, o.summary).await?;
            }
            Ok(())
        }
        /// `(id, status, eventType)` of every stored event of an OpenLineage run: what a START needs
        /// to know whether its run already failed, without reading the bodies.
        async fn run_event_states(&self, _run_id: &str) -> StoreResult<Vec<(Id, String, Option<String>)>> {
            Err(not_supported(self.kind()))
        }
        /// `run_event_states` of each of these runs in one read, as `(runId, id, status,
        /// eventType)`, by run in the given order, then by id.
        async fn runs_event_states(&self, run_ids: &[String]) -> StoreResult<Vec<(String, Id, String, Option<String>)>> {
            let mut out = Vec::new();
            for run_id in run_ids {
                let states = self.run_event_states(run_id).await?;
                out.extend(states.into_iter().map(|(id, status, t)| (run_id.clone(), id, status, t)));
            }
            Ok(out)
        }
        /// Newest first.
        async fn list_events(&self, _filter: &EventFilter, _page: PageRequest) -> StoreResult<Page<StoredEvent>> {
            Err(not_supported(self.kind()))
        }
        /// Marquez's `/events/lineage`: the run events whose `eventTime` is in the window, by
        /// `eventTime` (then id) in its direction, a page of them, and the count of every event
        /// in the window (Marquez counts job and dataset events too). Rejected events and events
        /// without a time are not in it.
        async fn events_by_event_time(
            &self,
            _window: &crate::domain::EventTimeWindow,
        ) -> StoreResult<(Vec<StoredEvent>, i64)> {
            Err(not_supported(self.kind()))
        }
        /// Oldest first, ids above `after`, for replay.
        async fn events_after(&self, _after: Id, _limit: i64) -> StoreResult<Vec<StoredEvent>> {
            Err(not_supported(self.kind()))
        }
        /// Deletes events received before `before`; returns how many.
        async fn purge_events(&self, _before: Timestamp) -> StoreResult<u64> {
            Err(not_supported(self.kind()))
        }

        // ---- the change log (see `domain::changes`) ----
        /// Up to `first` changes with a position above `after`, in position order; with
        /// `container_id`, only those touching that container. Only committed changes are seen,
        /// and a change never commits with a position below one already visible.
        async fn changes_after(&self, _after: Id, _first: i64, _container_id: Option<Id>) -> StoreResult<Vec<Change>> {
            Err(not_supported(self.kind()))
        }
        /// The highest position in the log (0 when empty): how far behind a reader is.
        async fn latest_change_position(&self) -> StoreResult<Id> {
            Err(not_supported(self.kind()))
        }
        /// Deletes changes recorded before `before` (the event retention); returns how many.
        async fn purge_changes(&self, _before: Timestamp) -> StoreResult<u64> {
            Err(not_supported(self.kind()))
        }

        // ---- jobs and runs (see `domain::jobs`) ----
        /// Folds an event's job, run and datasets into the stored ones (`merge_job`,
        /// `merge_run`, `merge_io`, `note_run`) in one transaction: the job (and its parent and
        /// root jobs, by name) created or updated, the run created or updated, the run's and the
        /// job's datasets united with the event's, and when the run is COMPLETE, the job's
        /// written datasets marked completed by it. Where the store keeps relationships, the
        /// evidence of `record.evidence_key` on the run's edges is tied to the run (or the job).
        async fn record_run(&self, _record: crate::domain::RunRecord) -> StoreResult<()> {
            Err(not_supported(self.kind()))
        }
        async fn jobs_by_ids(&self, _ids: &[Id]) -> StoreResult<Vec<crate::domain::Job>> {
            Err(not_supported(self.kind()))
        }
        async fn job_by_name(&self, _namespace: &str, _name: &str) -> StoreResult<Option<crate::domain::Job>> {
            Err(not_supported(self.kind()))
        }
        /// Jobs ordered by id.
        async fn list_jobs(
            &self,
            _filter: &crate::domain::JobFilter,
            _page: PageRequest,
        ) -> StoreResult<Page<crate::domain::Job>> {
            Err(not_supported(self.kind()))
        }
        /// The jobs whose parent is one of `ids`, ordered by id.
        async fn child_jobs(&self, _ids: &[Id]) -> StoreResult<Vec<crate::domain::Job>> {
            Err(not_supported(self.kind()))
        }
        /// Runs by the store's own ids.
        async fn runs_by_ids(&self, _ids: &[Id]) -> StoreResult<Vec<crate::domain::Run>> {
            Err(not_supported(self.kind()))
        }
        /// Runs by their OpenLineage `runId`s.
        async fn runs_by_run_ids(&self, _run_ids: &[String]) -> StoreResult<Vec<crate::domain::Run>> {
            Err(not_supported(self.kind()))
        }
        /// A run by its OpenLineage `runId` with the datasets it read and wrote, as one read
        /// (in the embedded store's session, as the session's own updates left it).
        async fn run_with_io(&self, run_id: &str) -> StoreResult<crate::domain::KnownRun> {
            let Some(run) = self.runs_by_run_ids(&[run_id.to_string()]).await?.into_iter().next() else {
                return Ok(crate::domain::KnownRun::default());
            };
            let io = self.run_io(&[run.id]).await?.into_iter().map(|(_, e)| e).collect();
            Ok(crate::domain::KnownRun { run: Some(run), io })
        }
        /// `run_with_io` of each run a chunk of OpenLineage events names, by runId (a run not
        /// stored: `KnownRun::default()`), in one read; in a Neo4j session also the chunk's jobs
        /// and runs looked up and locked, as `record_run` would one event at a time, and kept
        /// for the session's `record_run` calls (see `store::neo4j::jobs`).
        async fn look_up_runs(&self, wanted: &ChunkJobs) -> StoreResult<Vec<(String, crate::domain::KnownRun)>> {
            let mut out = Vec::with_capacity(wanted.run_ids.len());
            for run_id in &wanted.run_ids {
                out.push((run_id.clone(), self.run_with_io(run_id).await?));
            }
            Ok(out)
        }
        /// Reads ahead, for a chunk of OpenLineage events applied in a session, every edge from
        /// each pair's source container (or one of its fields) to its target container (or one
        /// of its fields) and the edges `ids`, so that each event's `apply_assertions` reads
        /// only what lies outside them. Only Neo4j's session keeps them (its assertion buffer,
        /// `store::neo4j::overlay`); elsewhere nothing.
        async fn read_ahead_edges(&self, pairs: &[(Id, Id)], ids: &[Id]) -> StoreResult<()> {
            let _ = (pairs, ids);
            Ok(())
        }
        /// A job's runs, the latest first (by `Run::began`, then id).
        async fn runs_of_job(
            &self,
            _job_id: Id,
            _filter: &crate::domain::RunFilter,
            _page: PageRequest,
        ) -> StoreResult<Page<crate::domain::Run>> {
            Err(not_supported(self.kind()))
        }
        /// The runs whose parent run is one of `run_ids`, ordered by id.
        async fn child_runs(&self, _run_ids: &[String]) -> StoreResult<Vec<crate::domain::Run>> {
            Err(not_supported(self.kind()))
        }
        /// The datasets these jobs read and wrote, by job id.
        async fn job_io(&self, _job_ids: &[Id]) -> StoreResult<Vec<(Id, crate::domain::IoEntry)>> {
            Err(not_supported(self.kind()))
        }
        /// The datasets these runs (by the store's ids) read and wrote, by run id.
        async fn run_io(&self, _run_ids: &[Id]) -> StoreResult<Vec<(Id, crate::domain::IoEntry)>> {
            Err(not_supported(self.kind()))
        }
        /// The job and run datasets naming one of `from` (external assets) name `to` instead (the
        /// container they turned out to be); an entry whose job or run already lists `to` in the
        /// same direction is dropped. `change`, when given, is recorded in the same transaction
        /// (the adoption's entry in the change log). How many entries moved or went.
        async fn replace_io_ends(
            &self,
            _from: &[End],
            _to: &End,
            _change: Option<crate::domain::NewChange>,
        ) -> StoreResult<u64> {
            Err(not_supported(self.kind()))
        }
        /// The external assets that may be OpenLineage placeholders a registration adopts, whose
        /// fqn (lowercased) contains `needle` (given lowercased; empty for all): `(fqn, namespace,
        /// name)` of each job dataset naming one (the dataset as sent), and `(fqn, "", "")` of
        /// each one a live edge of `source_type` names. Distinct, ordered.
        async fn external_placeholders(
            &self,
            _needle: &str,
            _source_type: &str,
        ) -> StoreResult<Vec<(String, String, String)>> {
            Err(not_supported(self.kind()))
        }
        /// The job datasets (as `job_io`) on one of these ends (containers or external assets):
        /// which jobs read and write them.
        async fn jobs_of_ends(&self, _ends: &[End]) -> StoreResult<Vec<(Id, crate::domain::IoEntry)>> {
            Err(not_supported(self.kind()))
        }
        /// The jobs' latest runs that are in a failure state (FAIL, ABORT) and ended in the window,
        /// the latest first, at most `limit`.
        async fn failed_latest_runs(
            &self,
            _since: Option<Timestamp>,
            _until: Option<Timestamp>,
            _limit: i64,
        ) -> StoreResult<Vec<crate::domain::Run>> {
            Err(not_supported(self.kind()))
        }

        /// As of `at`: each job's latest run then, the one of `job_ids`' runs that began last at
        /// or before `at` (by `Run::began`, then id), one per job that had begun one, in any
        /// order, as stored now (`service::jobs_asof` cuts its states at `at`).
        async fn latest_runs_at(&self, job_ids: &[Id], at: Timestamp) -> StoreResult<Vec<crate::domain::Run>> {
            let filter = crate::domain::RunFilter { until: Some(at), ..Default::default() };
            let mut out = Vec::new();
            for id in job_ids {
                out.extend(self.runs_of_job(*id, &filter, PageRequest { page: 1, size: 1 }).await?.items);
            }
            Ok(out)
        }
        /// As of `at`: the runs that had failed by then (FAIL or ABORT, ended at or before `at`)
        /// and were still their job's latest run then (as `latest_runs_at`), the latest ended
        /// first, at most `limit`: `failed_latest_runs` at a past instant.
        async fn failed_latest_runs_at(&self, _at: Timestamp, _limit: i64) -> StoreResult<Vec<crate::domain::Run>> {
            Err(not_supported(self.kind()))
        }

        // ---- small documents: users, tokens, teams ----
        /// Creates or replaces the document (kind, key).
        async fn put_doc(&self, _kind: &str, _key: &str, _value: serde_json::Value) -> StoreResult<()> {
            Err(not_supported(self.kind()))
        }
        async fn get_doc(&self, _kind: &str, _key: &str) -> StoreResult<Option<serde_json::Value>> {
            Err(not_supported(self.kind()))
        }
        /// Every document of a kind, ordered by key.
        async fn list_docs(&self, _kind: &str) -> StoreResult<Vec<(String, serde_json::Value)>> {
            Err(not_supported(self.kind()))
        }
    }
}
