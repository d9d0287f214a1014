//! How a statement runs: `Cmd` (a `cypher/` statement with its parameters), the `Run` targets a
//! concern function takes (the caller's transaction, one transaction per statement, an auto-commit
//! read, a pooled read), `detached` (every exchange runs to its end in its own task), the mapping of
//! neo4rs errors onto `StoreError`, and the small helpers the concern files share. Split out of
//! `store/neo4j.rs` so that file holds the store and its one `impl Store`.

use super::*;

/// The Neo4j status code of a server failure (`Neo.ClientError.Schema...`). neo4rs 0.8 returns a
/// failure answering RUN as `Error::Neo4j`, but one answering PULL (constraint violations and
/// deadlocks surface there, when the write executes) as `UnexpectedMessage` with the code only in
/// the text, so the code is also looked for in that text.
pub(super) fn status_code(e: &neo4rs::Error) -> Option<&str> {
    match e {
        neo4rs::Error::Neo4j(n) => Some(n.code()),
        neo4rs::Error::UnexpectedMessage(text) => {
            let start = text.find("Neo.")?;
            let code = &text[start..];
            let end = code.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.')).unwrap_or(code.len());
            Some(&code[..end])
        }
        _ => None,
    }
}

/// Maps a driver error: connection-level failures (and Neo4j's transient and routing errors) are
/// `Unavailable`, a violated uniqueness constraint is `Conflict`, anything else `Internal`.
pub(super) fn db_error(operation: &'static str, e: neo4rs::Error) -> StoreError {
    use neo4rs::{Error as E, Neo4jClientErrorKind as C, Neo4jErrorKind as K};
    let code = status_code(&e);
    if code == Some(CONSTRAINT_VIOLATION) {
        tracing::warn!(error = %e, operation, "neo4j constraint violation");
        return StoreError::Conflict("The change conflicts with data already stored".to_string());
    }
    tracing::error!(error = %e, operation, "neo4j query failed");
    let unavailable = match &e {
        E::IOError { .. }
        | E::ConnectionError
        | E::UrlParseError(_)
        | E::UnsupportedScheme(_)
        | E::InvalidDnsName(_)
        | E::AuthenticationError(_)
        | E::UnsupportedVersion(_) => true,
        E::Neo4j(n) => {
            matches!(n.kind(), K::Transient | K::Client(C::SessionExpired | C::FatalDiscovery | C::Security(_)))
        }
        _ => code.is_some_and(|code| code.starts_with("Neo.TransientError.")),
    };
    if unavailable {
        StoreError::Unavailable(e.to_string())
    } else {
        StoreError::Internal(e.to_string())
    }
}

pub(super) fn internal(operation: &'static str, message: String) -> StoreError {
    tracing::error!(error = %message, operation, "neo4j query failed");
    StoreError::Internal(message)
}

/// The rows of one statement, with its name for error messages.
pub(super) struct Rows {
    pub(super) op: &'static str,
    pub(super) rows: Vec<Row>,
}

impl Rows {
    pub(super) fn first(&self) -> StoreResult<&Row> {
        self.rows.first().ok_or_else(|| internal(self.op, format!("{} returned no row", self.op)))
    }

    pub(super) fn get<T: DeserializeOwned>(&self, row: &Row, column: &str) -> StoreResult<T> {
        row.get::<T>(column).map_err(|e| internal(self.op, format!("cannot read column {column} of {}: {e}", self.op)))
    }

    /// `column` of the first row.
    pub(super) fn value<T: DeserializeOwned>(&self, column: &str) -> StoreResult<T> {
        self.get(self.first()?, column)
    }

    /// `column` of every row.
    pub(super) fn column<T: DeserializeOwned>(&self, column: &str) -> StoreResult<Vec<T>> {
        self.rows.iter().map(|row| self.get(row, column)).collect()
    }

    pub(super) fn decode<P: Decode>(&self, column: &str) -> StoreResult<Vec<P::Out>> {
        self.column::<P>(column)?.into_iter().map(Decode::decode).collect()
    }

    pub(super) fn decode_first<P: Decode>(&self, column: &str) -> StoreResult<P::Out> {
        self.value::<P>(column)?.decode()
    }

    /// A page from a statement returning one row `items, total`.
    pub(super) fn page<P: Decode>(&self, page: PageRequest) -> StoreResult<Page<P::Out>> {
        let items: Vec<P> = self.value("items")?;
        let items = items.into_iter().map(Decode::decode).collect::<StoreResult<_>>()?;
        Ok(Page { items, total: self.value("total")?, page })
    }
}

/// Runs a statement inside a transaction and reads all its rows.
pub(super) async fn exec(txn: &mut Txn, cmd: Cmd) -> StoreResult<Rows> {
    let op = cmd.name;
    metrics::store_query(KIND, op);
    let started = std::time::Instant::now();
    let mut stream = txn.execute(cmd.query).await.map_err(|e| db_error(op, e))?;
    let mut rows = Vec::new();
    while let Some(row) = stream.next(txn.handle()).await.map_err(|e| db_error(op, e))? {
        rows.push(row);
    }
    metrics::store_statement(KIND, op, started.elapsed().as_secs_f64());
    Ok(Rows { op, rows })
}

/// Commits on success; rolls back on error (after a failed statement the server has already
/// failed the transaction and the rollback may itself fail: the pool resets the connection).
pub(super) async fn finish<T>(txn: Txn, result: StoreResult<T>) -> StoreResult<T> {
    match result {
        Ok(value) => {
            txn.commit().await.map_err(|e| db_error("commit", e))?;
            Ok(value)
        }
        Err(error) => {
            if let Err(e) = txn.rollback().await {
                tracing::debug!(error = %e, "neo4j rollback after a failed statement failed");
            }
            Err(error)
        }
    }
}

/// Where the statements of a concern file's function run; each `Store` method picks one, so the
/// same function serves an auto-commit read and a step of a larger transaction:
/// - `&mut Txn`: in the caller's explicit transaction (`Neo4jStore::write`);
/// - [`OwnTxn`]: each statement alone in its own explicit transaction;
/// - [`AutoCommit`]: each statement an auto-commit query (reads only).
pub(super) trait Run: Send {
    fn run(&mut self, cmd: Cmd) -> impl Future<Output = StoreResult<Rows>> + Send;
}

impl Run for &mut Txn {
    async fn run(&mut self, cmd: Cmd) -> StoreResult<Rows> {
        exec(self, cmd).await
    }
}

/// Runs each statement in its own explicit transaction. Not `Graph::execute`: neo4rs 0.8 retries
/// that one with backoff for up to a minute when the server cannot be reached, and a store that
/// is down must answer `Unavailable` at once (readiness probes, request timeouts).
pub(super) struct OwnTxn<'a>(pub(super) &'a Neo4jStore);

impl Run for OwnTxn<'_> {
    async fn run(&mut self, cmd: Cmd) -> StoreResult<Rows> {
        write_txn!(self.0, |txn| exec(txn, cmd.clone()))
    }
}

/// Runs one statement's or transaction's exchange to its end even when the caller stops waiting
/// (a client gone, the store's time limit): neo4rs 0.8 hands a connection dropped mid-exchange
/// back to its pool with the reply unread. Its recycling sends RESET and takes the first message
/// back for RESET's answer: with records pending that fails and the connection is dropped, but
/// with a lone SUCCESS pending (a RUN, a COMMIT, an empty PULL) it passes, and every later
/// exchange on the connection reads the reply before its own, so a read answers no rows.
pub(super) async fn detached<T: Send + 'static>(
    work: impl Future<Output = StoreResult<T>> + Send + 'static,
) -> StoreResult<T> {
    tokio::spawn(work).await.map_err(|e| StoreError::Internal(format!("a neo4j statement's task stopped: {e}")))?
}

/// Runs each read-only statement as an auto-commit query: RUN and PULL, two round trips, where
/// `OwnTxn` adds BEGIN and COMMIT. For the graph and catalog reads a query answers, which are
/// most of the statements a request sends. `Graph::execute` retries a *transient* server error (a
/// leader switch, exhausted transaction memory) with backoff, and the store's time limit
/// (`store::timeout`) bounds the retries. It retries a connection it cannot open the same way
/// (neo4rs 0.8 takes any pool error for a transient one), so the statement also races
/// `refused`: a server that refuses connections answers `Unavailable` at once, as in `OwnTxn`.
#[derive(Clone, Copy)]
pub(super) struct AutoCommit<'a>(pub(super) &'a Neo4jStore);

impl Run for AutoCommit<'_> {
    async fn run(&mut self, cmd: Cmd) -> StoreResult<Rows> {
        if let Some(session) = &self.0.session {
            return session.clone().exec(cmd).await;
        }
        Pool(self.0).run(cmd).await
    }
}

/// `AutoCommit` on the pool even on a session view: for the reads a session may make beside
/// its transaction (see `Neo4jStore::beside`).
pub(super) struct Pool<'a>(pub(super) &'a Neo4jStore);

impl Run for Pool<'_> {
    async fn run(&mut self, cmd: Cmd) -> StoreResult<Rows> {
        let graph = self.0.graph.clone();
        let op = cmd.name;
        let work = detached(async move {
            metrics::store_query(KIND, op);
            let mut stream = graph.execute(cmd.query).await.map_err(|e| db_error(op, e))?;
            let mut rows = Vec::new();
            while let Some(row) = stream.next().await.map_err(|e| db_error(op, e))? {
                rows.push(row);
            }
            Ok(Rows { op, rows })
        });
        // The statement goes on alone (see `detached`); neo4rs gives up on it within a minute.
        tokio::select! {
            rows = work => rows,
            e = refused(&self.0.address) => Err(db_error(op, neo4rs::Error::IOError { detail: e })),
        }
    }
}

/// Resolves, with the error, once a new connection to `address` is refused; never while the
/// server accepts them. It looks only when a statement is slow (after 100 ms, then every
/// 250 ms), so a store that answers pays nothing.
pub(super) async fn refused(address: &str) -> std::io::Error {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    loop {
        match tokio::net::TcpStream::connect(address).await {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return e,
            _ => tokio::time::sleep(std::time::Duration::from_millis(250)).await,
        }
    }
}

/// `host:port` of a Bolt URI (`bolt://host:port`, `neo4j+s://host`, ...), port 7687 by default.
pub(super) fn bolt_address(uri: &str) -> String {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    let host_port = rest.split(['/', '?']).next().unwrap_or(rest);
    let host_port = host_port.rsplit_once('@').map_or(host_port, |(_, h)| h);
    let has_port = host_port.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok());
    if has_port {
        host_port.to_string()
    } else {
        format!("{host_port}:7687")
    }
}

/// Runs `cmd` over `ids` (sorted and distinct, as `$ids`) and decodes `column` of every row; no
/// statement for no ids.
pub(super) async fn decode_by_ids<P: Decode>(
    mut db: impl Run,
    cmd: Cmd,
    ids: &[Id],
    column: &str,
) -> StoreResult<Vec<P::Out>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    db.run(cmd.param("ids", distinct(ids))).await?.decode::<P>(column)
}

/// Sorted, distinct ids: the `$ids` of a batched statement.
pub(super) fn distinct(ids: &[Id]) -> Vec<Id> {
    let set: BTreeSet<Id> = ids.iter().copied().collect();
    set.into_iter().collect()
}

pub(super) fn count(n: usize) -> StoreResult<i64> {
    i64::try_from(n).map_err(|_| StoreError::Invalid(format!("too many rows: {n}")))
}

pub(super) fn first_id(ids: &HashMap<String, Id>, counter: &'static str) -> StoreResult<Id> {
    ids.get(counter).copied().ok_or_else(|| internal("allocate_ids", format!("no id block for {counter}")))
}

/// One statement of `cypher/`, with its parameters; `name` (the file name) is its operation label
/// in metrics and logs.
#[derive(Clone)]
pub(super) struct Cmd {
    pub(super) name: &'static str,
    pub(super) query: Query,
    /// Whether the statement names edges or evidence: in a session, its buffered assertions
    /// are written before it runs (see `overlay`).
    pub(super) lineage: bool,
}

impl Cmd {
    pub(super) fn new(name: &'static str, text: &'static str) -> Self {
        let lineage = text.contains("LINEAGE") || text.contains("Evidence");
        Cmd { name, query: neo4rs::query(text), lineage }
    }

    pub(super) fn param(mut self, key: &str, value: impl Into<BoltType>) -> Self {
        self.query = self.query.param(key, value);
        self
    }
}
