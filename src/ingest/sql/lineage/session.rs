//! The tables of the call: what each statement creates or writes is recorded in the analyzer's
//! session, so later statements resolve through it (an intermediate table collapses into its
//! sources, a view is read through), and the written columns are turned into the
//! [`ColumnLineage`] reported, a column that is only its own source left out.

use std::collections::HashMap;
use std::rc::Rc;

use crate::ingest::sql::ColumnLineage;

use super::names::is_local_temp;
use super::{lower, Analyzer, Entry, EntryKind, Lin, OutCol, Output, StmtResult};

impl Analyzer<'_> {
    /// Records the columns written to `target`, and returns them as [`ColumnLineage`].
    pub(super) fn columns_out(&self, target: &str, cols: &[(String, Lin)]) -> Vec<ColumnLineage> {
        let tl = lower(target);
        let mut merged: Vec<(String, Lin)> = Vec::with_capacity(cols.len());
        let mut at: HashMap<String, usize> = HashMap::with_capacity(cols.len());
        for (name, lin) in cols {
            match at.get(&lower(name)).and_then(|&i| merged.get_mut(i)) {
                Some((_, l)) => l.merge(lin),
                None => {
                    at.insert(lower(name), merged.len());
                    merged.push((name.clone(), lin.clone()));
                }
            }
        }
        let mut out = Vec::with_capacity(merged.len());
        for (name, lin) in merged {
            let had = !lin.sources.is_empty();
            let mut sources: Vec<String> = lin
                .sources
                .iter()
                .filter(|(t, c)| !(lower(t) == tl && c.eq_ignore_ascii_case(&name)))
                .map(|(t, c)| format!("{t}.{c}"))
                .collect();
            if had && sources.is_empty() {
                continue;
            }
            sources.sort();
            sources.dedup();
            out.push(ColumnLineage { target: format!("{target}.{name}"), sources, derived: lin.derived });
        }
        out
    }

    /// Registers a table or view created by this statement.
    pub(super) fn create(&mut self, target: &str, cols: &[(String, Lin)], temp: bool, view: bool) -> bool {
        let key = lower(target);
        let kind = if temp || self.intermediate.contains(&key) {
            EntryKind::Intermediate
        } else if view {
            EntryKind::View
        } else {
            EntryKind::Table
        };
        let sources = self.tables.iter().filter(|t| lower(t) != key).cloned().collect();
        self.session.insert(key, Entry::new(kind, target, cols.iter().map(|(n, l)| (n, l)), sources));
        kind == EntryKind::Intermediate
    }

    /// A table or view made from a query's output `out` (`CREATE TABLE ... AS`, `SELECT ... INTO`,
    /// `CREATE VIEW`, Spark's `CACHE TABLE ... AS`), its columns named by `names` in order when
    /// given, else as the query names them: registered, and reported as a `CTAS` or a `VIEW`.
    pub(super) fn created_from(
        &mut self,
        target: String,
        names: &[String],
        out: &Output,
        temp: bool,
        view: bool,
    ) -> StmtResult {
        let cols = if names.is_empty() { out.named_pairs() } else { Self::pairs(names, out) };
        let intermediate = self.create(&target, &cols, temp, view);
        self.keep_stars(&target, &out.star_tables);
        StmtResult {
            operation: if view { "VIEW" } else { "CTAS" }.into(),
            columns: self.columns_out(&target, &cols),
            targets: vec![target],
            intermediate,
            ..StmtResult::default()
        }
    }

    /// A view or intermediate table made with `SELECT *` over a table of unknown columns: a later
    /// reference to any of its columns is that table's column.
    pub(super) fn keep_stars(&mut self, target: &str, stars: &[String]) {
        if stars.is_empty() {
            return;
        }
        if let Some(e) = self.session.get_mut(&lower(target)).filter(|e| e.kind != EntryKind::Table) {
            e.out = Rc::new(Output::new(e.out.cols.clone(), stars.to_vec()));
        }
    }

    /// Merges what a write (INSERT, MERGE, UPDATE) adds to a table created earlier in the call.
    /// Returns whether the target is intermediate.
    pub(super) fn write(&mut self, target: &str, cols: &[(String, Lin)]) -> bool {
        let key = lower(target);
        let tables: Vec<String> = self.tables.iter().filter(|t| lower(t) != key).cloned().collect();
        let temp_name = is_local_temp(target);
        let Some(e) = self.session.get_mut(&key) else {
            if temp_name || self.intermediate.contains(&key) {
                return self.create(target, cols, true, false);
            }
            return false;
        };
        let mut out_cols = e.out.cols.clone();
        let mut at: HashMap<String, usize> = e.out.index.clone();
        for (n, l) in cols {
            let lin = e.kind.keeps(target, n, l);
            match at.get(&lower(n)).and_then(|&i| out_cols.get_mut(i)) {
                Some(c) if e.kind != EntryKind::Table => c.lin.merge(&lin),
                Some(_) => {}
                None => {
                    at.insert(lower(n), out_cols.len());
                    out_cols.push(OutCol { name: n.clone(), lin });
                }
            }
        }
        e.out = Rc::new(Output::new(out_cols, Vec::new()));
        e.sources.extend(tables);
        e.kind == EntryKind::Intermediate
    }

    pub(super) fn pairs(names: &[String], out: &Output) -> Vec<(String, Lin)> {
        names.iter().zip(out.cols.iter()).map(|(n, c)| (n.clone(), c.lin.clone())).collect()
    }
}
