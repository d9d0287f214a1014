//! How a call of the embedded store runs: opening the connections, `read` on a reader on the
//! calling thread (`read_split` in two halves side by side), `write` on the writer through the
//! blocking pool, `write_unguarded` inside a session; the shared paged-list helpers
//! (`select_rows`, `select_page` with its `Filter`). Split out of `store/sqlite.rs`, which holds the
//! store and its one `impl Store`.

use chrono::SubsecRound;

use super::*;

pub(super) fn internal<E: std::fmt::Display + 'static>(e: E) -> StoreError {
    if let Some(unavailable) = disk::unavailable(&e) {
        return unavailable;
    }
    tracing::error!(error = %e, store = STORE, "embedded store failed");
    StoreError::Internal(e.to_string())
}

pub(super) fn open_connection(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path)
        .map_err(|e| StoreError::Unavailable(format!("cannot open the embedded store at {}: {e}", path.display())))?;
    conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(internal)?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(internal)?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(internal)?;
    conn.pragma_update(None, "foreign_keys", "OFF").map_err(internal)?;
    // Reads through a memory map instead of a pread and a copy per page: every commit empties
    // the other connections' page caches, so readers fetch the same index pages again and again.
    // The whole file: at 1 GiB a store of a million containers (6 GB) read most pages through
    // the pager. SQLite caps the map at compile time (2 GiB by default); `.cargo/config.toml`
    // raises the cap to this size.
    conn.pragma_update(None, "mmap_size", MMAP_BYTES).map_err(internal)?;
    // Temporary b-trees (sorts, `IN` lists, subqueries) and a session's savepoint journal stay
    // in memory instead of going through a temporary file.
    conn.pragma_update(None, "temp_store", "MEMORY").map_err(internal)?;
    // Ingest and traversal use a few dozen distinct statements; keep them all prepared.
    conn.set_prepared_statement_cache_capacity(128);
    rusqlite::vtab::array::load_module(&conn).map_err(internal)?;
    register_unicode_lower(&conn).map_err(internal)?;
    live_at::register(&conn).map_err(internal)?;
    Ok(conn)
}

/// Runs `f` on reader `i`. A panic in an earlier read leaves no half-done state on a reader:
/// its lock is recovered.
pub(super) fn on_reader<T>(
    readers: &[Mutex<Connection>],
    i: usize,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> StoreResult<T> {
    let conn = readers[i].lock().unwrap_or_else(|p| p.into_inner());
    f(&conn).map_err(internal)
}

pub(super) fn sql_err(e: rusqlite::Error) -> StoreError {
    internal(e)
}

impl SqliteStore {
    /// Opens (creating when absent) the store in `dir/tributary.db`.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Unavailable(format!("cannot create the data directory {}: {e}", dir.display())))?;
        disk::remember_data_dir(dir);
        let path = dir.join("tributary.db");
        let mut writer = open_connection(&path)?;
        // Files that cannot be written can still open (SQLite falls back to reading them, and a
        // WAL left by a process that ended without closing it reads through its `-shm`), and
        // every write would fail later: refuse such a store here, as an unwritable directory is.
        if writer.is_readonly(rusqlite::MAIN_DB).map_err(internal)? {
            tracing::error!(store = STORE, data_dir = %dir.display(), "the embedded store's file cannot be written");
            return Err(StoreError::Unavailable(format!(
                "the store file {} can only be read (a read-only file system or file); make it writable",
                path.display()
            )));
        }
        // Only the writer keeps a large page cache: its own commits do not empty it, whereas a
        // reader's is dropped after every write, and dropping a large cache costs in proportion.
        writer.pragma_update(None, "cache_size", -32_768).map_err(internal)?;
        // Checkpoints run on their own thread (`Checkpointer`), not inside whichever commit
        // crosses the threshold: a checkpoint copies and syncs tens of MiB, which a request
        // should not wait for. The writer's own only starts if that thread falls far behind.
        writer.pragma_update(None, "wal_autocheckpoint", 50_000).map_err(internal)?;
        writer.pragma_update(None, "journal_size_limit", WAL_LIMIT_BYTES).map_err(internal)?;
        migrations::open_schema(&mut writer, dir)?;
        // Idempotent: creates and backfills the change log on a store made before it existed.
        schema::migrate_change_log(&mut writer)?;
        let readers = (0..READERS)
            .map(|_| {
                let reader = open_connection(&path)?;
                // Big enough for a graph query's index pages to stay between queries (at
                // SQLite's 2 MiB default, pages were loaded again for most queries), small
                // enough that the reset after another connection's commit stays cheap.
                reader.pragma_update(None, "cache_size", -8_192).map_err(internal)?;
                Ok(Mutex::new(reader))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let checkpointer = Arc::new(Checkpointer::start(open_connection(&path)?, WAL_LIMIT_BYTES));
        Ok(Self {
            _checkpointer: checkpointer,
            writer: Arc::new(Mutex::new(writer)),
            readers: Arc::new(readers),
            next_reader: AtomicUsize::new(0),
            gate: Arc::new(tokio::sync::Mutex::new(())),
            session: None,
            adjacency: Arc::default(),
        })
    }

    /// Runs `f` on a reader connection, or in the session's transaction on a session view.
    pub(super) async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        if let Some(s) = &self.session {
            return s.run(move |c| f(c).map_err(internal));
        }
        // Right here on the async worker: a read takes tens of microseconds, and handing the
        // worker to another thread around it (`block_in_place`, ~13 us) or hopping to the
        // blocking pool (two wake-ups) costs more than most reads. A large read holds its worker
        // as long as it runs; the other workers go on (the concurrency benchmark doubled).
        on_reader(&self.readers, self.next_reader(), f)
    }

    /// The reader the next read takes, in turn.
    pub(super) fn next_reader(&self) -> usize {
        self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len()
    }

    /// A batched read over many ids (a traversal level's edges, the records of its answer) in
    /// two halves side by side, the second on another reader from the blocking pool, so that one
    /// graph query uses both cores instead of one. Each statement is one index seek per id in
    /// id order, so the halves of the sorted ids give back the rows in the order one statement
    /// would. Few ids, and reads inside a session (one connection), take one statement.
    pub(super) async fn read_split<T, F>(&self, ids: &[Id], f: F) -> StoreResult<Vec<T>>
    where
        T: Send + 'static,
        F: Fn(&Connection, &[Id]) -> rusqlite::Result<Vec<T>> + Clone + Send + 'static,
    {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() < SPLIT_LEVEL_AT || self.session.is_some() || self.readers.len() < 2 {
            return self.read(move |c| f(c, &ids)).await;
        }
        let upper = ids.split_off(ids.len() / 2);
        let (readers, i, g) = (self.readers.clone(), self.next_reader(), f.clone());
        // One read, counted once (`metrics::store_query`).
        let other =
            tokio::task::spawn_blocking(move || crate::metrics::uncounted(|| on_reader(&readers, i, |c| g(c, &upper))));
        let mut rows = self.read(move |c| f(c, &ids)).await?;
        let upper = other.await.map_err(|e| StoreError::Internal(format!("a split read's half stopped: {e}")))??;
        rows.extend(upper);
        Ok(rows)
    }

    /// A traversal level's edges, live now (`at` none) or at one of the instants: picked from
    /// the lists `adjacency` keeps on a reader; in a session, read from its transaction, which
    /// may hold what no reader sees yet.
    pub(super) async fn level_edges(
        &self,
        ids: &[Id],
        lists: adjacency::Lists,
        at: Option<Vec<Timestamp>>,
    ) -> StoreResult<Vec<Edge>> {
        let (fields, direction) = (lists.over_fields(), lists.direction());
        if self.session.is_some() {
            return self
                .read_split(ids, move |c, ids| match (fields, &at) {
                    (false, None) => graph::container_edges_of(c, ids, direction),
                    (true, None) => graph::field_edges_of(c, ids, direction),
                    (false, Some(at)) => graph::container_edges_live_at(c, ids, direction, at),
                    (true, Some(at)) => graph::field_edges_live_at(c, ids, direction, at),
                })
                .await;
        }
        let adjacency = self.adjacency.clone();
        self.read_split(ids, move |c, ids| {
            let ever = |c: &Connection, ids: &[Id]| match fields {
                false => graph::container_edges_ever(c, ids, direction),
                true => graph::field_edges_ever(c, ids, direction),
            };
            match &at {
                None => adjacency.edges(c, lists, ids, ever, |e| e.retired_at.is_none()),
                Some(at) => {
                    // As the statement's test: retired at or after the earliest instant (to the
                    // microsecond the column keeps), then live at one of them.
                    let since = at.iter().min().map(|t| t.trunc_subsecs(6));
                    let pick = |e: &Edge| {
                        e.retired_at.is_none_or(|r| since.is_none_or(|s| r >= s)) && at.iter().any(|t| e.live_at(*t))
                    };
                    adjacency.edges(c, lists, ids, ever, pick)
                }
            }
        })
        .await
    }

    /// In a session, writes its buffered job and run updates, so that a read of their tables
    /// sees them (see `jobs::JobsBuffer`).
    pub(super) fn flush_jobs(&self) -> StoreResult<()> {
        match &self.session {
            Some(s) => s.run(|c| s.with_jobs(|buffer| buffer.flush(c).map_err(sql_err))),
            None => Ok(()),
        }
    }

    /// `read` of a batched statement over `ids` (copied for `f`, which `read` needs to own).
    pub(super) async fn read_ids<T, F>(&self, ids: &[Id], f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &[Id]) -> rusqlite::Result<T> + Send + 'static,
    {
        let ids = ids.to_vec();
        self.read(move |c| f(c, &ids)).await
    }

    /// `write` for calls that fail only on the store's own errors (never on what they are
    /// asked): in a session, no savepoint guards the call, and a failure poisons the session
    /// instead (nothing of it commits, its caller reports every event of it failed). A
    /// savepoint copies every page a call first touches, a tenth of an ingested event's time.
    pub(super) async fn write_unguarded<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        match &self.session {
            Some(s) => s.run_unguarded(f),
            None => self.write(f).await,
        }
    }

    /// Runs `f` in one transaction on the writer (in a session, under a savepoint of its
    /// transaction); an error rolls back everything `f` did.
    pub(super) async fn write<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        if let Some(s) = &self.session {
            return s.run(move |c| {
                // Prepared once: parsing these three statements anew cost more than some calls.
                let run = |sql: &str| c.prepare_cached(sql).and_then(|mut s| s.execute([])).map_err(internal);
                run("SAVEPOINT call")?;
                let out = f(c);
                if out.is_err() {
                    run("ROLLBACK TO call")?;
                }
                run("RELEASE call")?;
                out
            });
        }
        let writer = self.writer.clone();
        // Held until the blocking work ends, even when the caller stops waiting for it.
        let gate = self.gate.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let _gate = gate;
            // A panicked write rolled back (its transaction was dropped): recover the lock.
            let mut conn = writer.lock().unwrap_or_else(|p| p.into_inner());
            // The write lock from the start: a deferred transaction that has read cannot wait
            // for it (SQLite answers `SQLITE_BUSY` at once to avoid a deadlock), and the
            // checkpoint thread takes it for a moment when it truncates a long WAL.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(internal)?;
            let out = f(&tx)?;
            store_query(STORE, "commit");
            tx.commit().map_err(internal)?;
            Ok(out)
        })
        .await
        .map_err(internal)?
    }
}

/// Runs a cached select and collects its rows (counted once under `op`): how almost every read
/// of the store goes.
pub(super) fn select_rows<T, B: FromIterator<T>>(
    conn: &Connection,
    op: &'static str,
    sql: &str,
    p: impl rusqlite::Params,
    row: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<B> {
    store_query(STORE, op);
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(p, row)?;
    rows.collect()
}

/// A WHERE clause of only the filters given, so the planner sees plain predicates it can answer
/// from an index (`?1 IS NULL OR run_id = ?1` in one cached statement scans the whole table).
#[derive(Default)]
pub(super) struct Filter {
    pub(super) clauses: Vec<String>,
    pub(super) params: Vec<SqlValue>,
}

impl Filter {
    /// Adds `sql`, in which every `?` stands for `value`, when there is a value.
    pub(super) fn when(&mut self, sql: &str, value: Option<SqlValue>) -> &mut Self {
        if let Some(v) = value {
            let mut numbered = String::new();
            for (i, part) in sql.split('?').enumerate() {
                if i > 0 {
                    numbered.push_str(&format!("?{}", self.params.len() + 1));
                }
                numbered.push_str(part);
            }
            self.clauses.push(format!("({numbered})"));
            self.params.push(v);
        }
        self
    }

    pub(super) fn always(&mut self, sql: &str) -> &mut Self {
        self.clauses.push(format!("({sql})"));
        self
    }

    pub(super) fn sql(&self) -> String {
        if self.clauses.is_empty() {
            "1".into()
        } else {
            self.clauses.join(" AND ")
        }
    }
}

/// A paged list (`list_containers`, `container_fields`, `list_edges`, `list_events`): the table,
/// the columns its rows are read with and their order, and the names its count and its page
/// are counted under in `tributary_store_queries_total`.
pub(super) struct Listing {
    pub(super) table: &'static str,
    pub(super) cols: &'static str,
    pub(super) order: &'static str,
    pub(super) count_op: &'static str,
    pub(super) list_op: &'static str,
}

/// One page of a list and the number of all its rows: those of `where_sql`, in which `?1`..`?N`
/// stand for `params`. Two statements: the count, then the page (its LIMIT and OFFSET bound as
/// `?N+1` and `?N+2`, so one cached statement serves every page).
pub(super) fn select_page<T>(
    c: &Connection,
    list: &Listing,
    where_sql: &str,
    params: Vec<SqlValue>,
    page: PageRequest,
    row: impl FnMut(&Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<Page<T>> {
    let Listing { table, cols, order, count_op, list_op } = list;
    store_query(STORE, count_op);
    let total: i64 = c.query_row(
        &format!("SELECT count(*) FROM {table} WHERE {where_sql}"),
        rusqlite::params_from_iter(&params),
        |r| r.get(0),
    )?;
    let (limit, offset) = (params.len() + 1, params.len() + 2);
    let sql = format!("SELECT {cols} FROM {table} WHERE {where_sql} ORDER BY {order} LIMIT ?{limit} OFFSET ?{offset}");
    let params = params.into_iter().chain([SqlValue::Integer(page.size), SqlValue::Integer(page.offset())]);
    let items = select_rows(c, list_op, &sql, rusqlite::params_from_iter(params), row)?;
    Ok(Page { items, total, page })
}
