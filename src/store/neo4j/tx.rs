//! A write's transaction together with what its writes need besides the transaction, passed to
//! them explicitly: where new ids come from (`ids::Ids`), and, in a session, where its metadata
//! values and change-log entries wait for the session's end (`Deferred`).
//!
//! Both were task-locals once, put in scope by four call sites; a write path that forgot one
//! failed only at run time, and the modules that read them imported the session's, which made
//! an import circle. Now a write that takes ids or records changes says so in its signature
//! (`&mut Tx`), and a write that only runs statements keeps taking `&mut Txn` (a `Tx` derefs to
//! its transaction).

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

use neo4rs::Txn;

use super::ids::Ids;
use super::{exec, Cmd, Rows, Run};
use crate::domain::{Id, MetadataAssertion, NewChange};
use crate::store::StoreResult;

/// Writes a session's calls made that wait for its end (see `session`).
#[derive(Default)]
pub(super) struct Deferred {
    pub(super) metadata: Vec<MetadataAssertion>,
    pub(super) changes: Vec<NewChange>,
}

impl Deferred {
    pub(super) fn append(&mut self, other: Deferred) {
        self.metadata.extend(other.metadata);
        self.changes.extend(other.changes);
    }
}

/// A transaction, the store's ids, and (in a session) the session call's deferred writes.
pub(super) struct Tx<'a> {
    txn: &'a mut Txn,
    ids: &'a Ids,
    deferred: Option<&'a mut Deferred>,
}

impl<'a> Tx<'a> {
    /// Writes that run their statements at once.
    pub(super) fn new(txn: &'a mut Txn, ids: &'a Ids) -> Tx<'a> {
        Tx { txn, ids, deferred: None }
    }

    /// Writes of a session call: metadata values and change-log entries kept in `deferred`
    /// for the session's end instead of a statement each.
    pub(super) fn deferring(txn: &'a mut Txn, ids: &'a Ids, deferred: &'a mut Deferred) -> Tx<'a> {
        Tx { txn, ids, deferred: Some(deferred) }
    }

    /// The first id of a block of `n` consecutive ids per `(counter, n)`, from the store's ids,
    /// reserved outside this transaction. Never from the counters inside it: that held a
    /// counter's lock until commit, and a writer waiting on it while another process's writer
    /// waited on this process's ids was a deadlock Neo4j cannot see (see `ids`).
    pub(super) async fn allocate(&self, wants: &[(&'static str, usize)]) -> StoreResult<HashMap<String, Id>> {
        self.ids.take(wants).await
    }

    /// Keeps `changes` for the session's end (then `true`); `false` outside a session, where
    /// the caller appends them at once.
    pub(super) fn defer_changes(&mut self, changes: &[NewChange]) -> bool {
        self.deferred.as_mut().map(|d| d.changes.extend_from_slice(changes)).is_some()
    }

    /// As `defer_changes`, for metadata values.
    pub(super) fn defer_metadata(&mut self, rows: &[MetadataAssertion]) -> bool {
        self.deferred.as_mut().map(|d| d.metadata.extend_from_slice(rows)).is_some()
    }
}

impl Deref for Tx<'_> {
    type Target = Txn;
    fn deref(&self) -> &Txn {
        self.txn
    }
}

impl DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Txn {
        self.txn
    }
}

impl Run for &mut Tx<'_> {
    async fn run(&mut self, cmd: Cmd) -> StoreResult<Rows> {
        exec(self.txn, cmd).await
    }
}
