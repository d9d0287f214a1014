//! Statements that create or move tables: `CREATE TABLE` (plain, `AS SELECT`, `LIKE`, `CLONE`,
//! external), `CREATE VIEW`, `RENAME`, and Snowflake's `SWAP WITH` (see the parent module's rules
//! for each).

use sqlparser::ast::{CreateTable, CreateView, ObjectName};

use super::names::{is_local_temp, name_parts};
use super::{lower, Analyzer, Entry, EntryKind, Lin, RelKind, StmtResult};

impl Analyzer<'_> {
    /// `ALTER TABLE a RENAME TO b`, `RENAME TABLE a TO b`: `b` now holds what `a` held, so `a`
    /// is its source and, when `a`'s columns are known, each column its namesake's. A 1-part new
    /// name stays in the old name's schema (Postgres, Snowflake, Oracle), whatever the defaults.
    pub(super) fn rename(&mut self, old: &ObjectName, new: &ObjectName, r: &mut StmtResult) {
        let from = self.qualify(old);
        let new_parts = name_parts(new, self.dialect);
        let to = match (new_parts.as_slice(), from.rsplit_once('.')) {
            ([one], Some((prefix, _))) if !is_local_temp(one) => format!("{prefix}.{one}"),
            _ => self.qualify(new),
        };
        let moved = self.session.remove(&lower(&from));
        let cols = self.moved_columns(&from, moved.as_ref());
        if let Some(e) = moved {
            self.rehome(e, &to);
        }
        r.columns.extend(self.columns_out(&to, &cols));
        r.targets.push(to);
    }

    /// Snowflake `ALTER TABLE a SWAP WITH b`: `a` now holds what `b` held (and `b` what `a` held).
    /// Reported like a rename of `b` to `a`: target `a`, source `b`, each column of `a` from its
    /// namesake in `b` when `b`'s columns are known; the tables of the call trade places too.
    pub(super) fn swap(&mut self, a: &ObjectName, b: &ObjectName, r: &mut StmtResult) {
        let (a, b) = (self.qualify(a), self.qualify(b));
        let ea = self.session.remove(&lower(&a));
        let eb = self.session.remove(&lower(&b));
        let cols = self.moved_columns(&b, eb.as_ref());
        for (e, to) in [(eb, &a), (ea, &b)] {
            if let Some(e) = e {
                self.rehome(e, to);
            }
        }
        r.columns.extend(self.columns_out(&a, &cols));
        r.targets.push(a);
    }

    /// The columns of `from`, a table that moves (renamed or swapped), as sources: through its
    /// `entry` in the call when it has one, else from the catalog. Records `from` (for an
    /// intermediate table, its sources) among the statement's sources.
    fn moved_columns(&mut self, from: &str, entry: Option<&Entry>) -> Vec<(String, Lin)> {
        let cols = match entry {
            Some(e) => e.out.cols.iter().map(|c| (c.name.clone(), e.kind.keeps(from, &c.name, &c.lin))).collect(),
            None => self.catalog_output(from).map(|o| o.named_pairs()).unwrap_or_default(),
        };
        match entry {
            Some(e) if e.kind == EntryKind::Intermediate => self.tables.extend(e.sources.iter().cloned()),
            _ => {
                self.tables.insert(from.to_string());
            }
        }
        cols
    }

    /// Puts `entry`, taken out of the session, back under the name `to`.
    fn rehome(&mut self, entry: Entry, to: &str) {
        let moved = Entry::new(entry.kind, to, entry.out.cols.iter().map(|c| (&c.name, &c.lin)), entry.sources);
        self.session.insert(lower(to), moved);
    }

    pub(super) fn create_table(&mut self, ct: &CreateTable) -> StmtResult {
        let target = self.qualify(&ct.name);
        let temp = ct.temporary || ct.volatile || is_local_temp(&target);
        let col_names: Vec<String> = ct.columns.iter().map(|c| self.fold(&c.name)).collect();
        let location = ct
            .location
            .clone()
            .or_else(|| ct.hive_formats.as_ref().and_then(|h| h.location.clone()))
            .or_else(|| table_option_location(ct));
        if let Some(q) = &ct.query {
            let out = self.query(q, None);
            let ctas = self.created_from(target, &col_names, &out, temp, false);
            return StmtResult { external_location: location, ..ctas };
        }
        if let Some(
            sqlparser::ast::CreateTableLikeKind::Plain(like) | sqlparser::ast::CreateTableLikeKind::Parenthesized(like),
        ) = &ct.like
        {
            // The shape only: no data moves, so no source; later statements know the columns.
            let from = self.qualify(&like.name);
            let names = self.target_columns(&from).unwrap_or_default();
            let cols: Vec<(String, Lin)> = names.into_iter().map(|n| (n, Lin::default())).collect();
            let intermediate = self.create(&target, &cols, temp, false);
            return StmtResult {
                operation: "CREATE_TABLE".into(),
                targets: vec![target],
                intermediate,
                ..StmtResult::default()
            };
        }
        if let Some(src) = &ct.clone {
            let rel = self.table_relation(src, None);
            let mut cols: Vec<(String, Lin)> = Vec::new();
            if let RelKind::Table { known: Some(o), .. } | RelKind::Derived(o) = &rel.kind {
                cols = o.named_pairs();
            }
            let intermediate = self.create(&target, &cols, temp, false);
            return StmtResult {
                operation: "CLONE".into(),
                columns: self.columns_out(&target, &cols),
                targets: vec![target],
                intermediate,
                ..StmtResult::default()
            };
        }
        let cols: Vec<(String, Lin)> = col_names.iter().map(|n| (n.clone(), Lin::default())).collect();
        let intermediate = self.create(&target, &cols, temp, false);
        let operation = if ct.external { "CREATE_EXTERNAL_TABLE" } else { "CREATE_TABLE" };
        StmtResult {
            operation: operation.into(),
            targets: vec![target],
            external_location: location,
            intermediate,
            ..StmtResult::default()
        }
    }

    pub(super) fn create_view(&mut self, cv: &CreateView) -> StmtResult {
        let target = self.qualify(&cv.name);
        let out = self.query(&cv.query, None);
        let names: Vec<String> = cv.columns.iter().map(|c| self.fold(&c.name)).collect();
        self.created_from(target, &names, &out, cv.temporary, true)
    }
}

/// `LOCATION = '...'` given as a table option (Snowflake external tables and others).
fn table_option_location(ct: &CreateTable) -> Option<String> {
    let text = ct.table_options.to_string();
    let upper = text.to_ascii_uppercase();
    let Some(at) = upper.find("LOCATION") else {
        // BigQuery `OPTIONS (uris = ['gs://...', ...])`: the first URI.
        let at = upper.find("URIS")?;
        let rest = text.get(at..)?;
        let open = rest.find('\'')? + 1;
        let len = rest.get(open..)?.find('\'')?;
        return rest.get(open..open + len).map(str::to_string);
    };
    let rest = text.get(at + "LOCATION".len()..)?.trim_start().trim_start_matches('=').trim_start();
    let value: String = if let Some(r) = rest.strip_prefix('\'') {
        r.split('\'').next().unwrap_or("").to_string()
    } else {
        rest.split(|c: char| c.is_whitespace() || c == ',' || c == ')').next().unwrap_or("").to_string()
    };
    (!value.is_empty()).then_some(value)
}
