//! Lineage of one parsed statement: which tables it writes and reads, and for each written column
//! the base-table columns its value is computed from.
//!
//! One pass over the tree. A query yields an [`Output`]: its columns in order, each with a [`Lin`]
//! (the set of base-table columns it reads, and whether it is more than a bare copy). A `SELECT`
//! builds the relations of its `FROM` (tables, CTEs, derived tables, table functions, `LATERAL
//! VIEW`s) into a [`Scope`], then computes each select item's lineage by visiting its expression
//! with a `sqlparser` `Visitor` ([`expr`]): every column reference is resolved through the scope
//! chain (inner query first, then the outer ones for correlated subqueries), and every subquery met
//! inside an expression is analysed as a query of its own, its output columns becoming sources.
//! Filters (`WHERE`, `JOIN ... ON`, `GROUP BY`, `HAVING`, `QUALIFY`) are visited only for the
//! subqueries in them, which add table-level sources but never column sources.
//!
//! CTE outputs are computed once, where they are defined, and shared by `Rc`. Tables created
//! earlier in the call live in the analyzer's session ([`session`]); see the parent module for
//! when they collapse.
//!
//! The analyzer's work is split by concern, one `impl Analyzer` block a file:
//!
//! - this file: what a walk yields ([`Lin`], [`Output`], [`StmtResult`]), the relations and scopes
//!   resolution looks through, the [`Analyzer`] itself and its entry point
//!   ([`Analyzer::statement`]), which sends each kind of statement to the file that handles it;
//! - [`names`]: qualified, folded names, the defaults `USE` changes, which tables collapse;
//! - [`expr`]: the lineage of an expression, resolving column references through the scopes;
//! - [`query`] and [`pivot`]: queries and the relations of a `FROM` clause;
//! - [`returning`]: the rows `RETURNING` and T-SQL `OUTPUT ... INTO` hand on;
//! - [`session`]: the tables of the call, and the written columns as reported;
//! - [`insert`], [`update`] (and `DELETE`), [`merge`], [`ddl`] (`CREATE`, `RENAME`, `SWAP`): the
//!   statements that write.

mod ddl;
mod expr;
mod insert;
mod merge;
mod names;
mod pivot;
mod query;
mod returning;
mod session;
mod update;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use sqlparser::ast::{CopySource, CopyTarget, Expr, Ident, ObjectName, ObjectNamePart, Query, SetExpr, Statement};

use sqlparser::parser::Parser;

use super::{ColumnLineage, Columns, Dialect, Options};
use names::{apply_search_path, apply_use, fold, idents, name_parts, qualify_parts, select_into};

pub(crate) use names::intermediate_tables;

/// A base-table column: (qualified table, column).
pub(crate) type ColRef = (String, String);

/// The lineage of one value.
#[derive(Clone, Default, Debug)]
pub(crate) struct Lin {
    pub sources: BTreeSet<ColRef>,
    pub derived: bool,
}

impl Lin {
    fn bare(table: &str, column: &str) -> Lin {
        let mut sources = BTreeSet::new();
        sources.insert((table.to_string(), column.to_string()));
        Lin { sources, derived: false }
    }

    fn merge(&mut self, other: &Lin) {
        self.sources.extend(other.sources.iter().cloned());
        self.derived |= other.derived;
    }
}

#[derive(Clone, Debug)]
pub(crate) struct OutCol {
    pub name: String,
    pub lin: Lin,
}

/// The columns a query or relation produces, with a case-insensitive index.
#[derive(Default, Debug)]
pub(crate) struct Output {
    pub cols: Vec<OutCol>,
    index: HashMap<String, usize>,
    /// Tables behind a `*` that could not be expanded (their columns are unknown).
    pub star_tables: Vec<String>,
}

impl Output {
    fn new(cols: Vec<OutCol>, star_tables: Vec<String>) -> Output {
        let mut index = HashMap::with_capacity(cols.len());
        for (i, c) in cols.iter().enumerate() {
            index.entry(c.name.to_lowercase()).or_insert(i);
        }
        Output { cols, index, star_tables }
    }

    fn get(&self, key: &str) -> Option<&OutCol> {
        self.index.get(key).and_then(|&i| self.cols.get(i))
    }

    /// The columns as (name, lineage) pairs, named as the query names them.
    fn named_pairs(&self) -> Vec<(String, Lin)> {
        self.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect()
    }

    /// Renames columns by position (`AS x(a, b)`, a CTE's column list).
    fn renamed(self, names: &[String]) -> Output {
        if names.is_empty() {
            return self;
        }
        let mut cols = self.cols;
        for (c, n) in cols.iter_mut().zip(names) {
            c.name = n.clone();
        }
        Output::new(cols, self.star_tables)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum EntryKind {
    Intermediate,
    View,
    Table,
}

impl EntryKind {
    /// What an entry of this kind keeps as the lineage of its column `name` (of `table`), computed
    /// from `lin`: a table's column is its own source, so later reads stop there; a view's or an
    /// intermediate table's keeps what it was computed from, so later reads go through it.
    fn keeps(self, table: &str, name: &str, lin: &Lin) -> Lin {
        if self == EntryKind::Table {
            Lin::bare(table, name)
        } else {
            lin.clone()
        }
    }
}

/// A table or view created earlier in the call.
#[derive(Debug)]
pub(crate) struct Entry {
    kind: EntryKind,
    /// Column lineage (for `Table`, bare references to the table itself).
    out: Rc<Output>,
    /// Table-level sources, already collapsed (used for `Intermediate`).
    sources: BTreeSet<String>,
}

impl Entry {
    /// The entry of `table`, of `kind`, with columns `cols` (each a name and what it was computed
    /// from, kept as [`EntryKind::keeps`] says).
    fn new<'c>(
        kind: EntryKind,
        table: &str,
        cols: impl IntoIterator<Item = (&'c String, &'c Lin)>,
        sources: BTreeSet<String>,
    ) -> Entry {
        let out_cols =
            cols.into_iter().map(|(n, l)| OutCol { name: n.clone(), lin: kind.keeps(table, n, l) }).collect();
        Entry { kind, out: Rc::new(Output::new(out_cols, Vec::new())), sources }
    }
}

/// What a statement means, before the parent module adds index, text and errors.
#[derive(Default)]
pub(crate) struct StmtResult {
    pub operation: String,
    pub targets: Vec<String>,
    pub sources: Vec<String>,
    pub columns: Vec<ColumnLineage>,
    pub unresolved: Vec<String>,
    /// Why the statement is not valid SQL (its lineage is then left out).
    pub errors: Vec<String>,
    pub external_location: Option<String>,
    pub intermediate: bool,
}

struct Relation {
    alias: Option<String>,
    /// Lower-cased name parts as written, for `schema.table.column` references without alias.
    parts: Vec<String>,
    kind: RelKind,
}

enum RelKind {
    Table {
        name: String,
        known: Option<Rc<Output>>,
    },
    Derived(Rc<Output>),
    /// A table function, `UNNEST`, `FLATTEN`, `LATERAL VIEW`: every column derives from `lin`.
    Generated {
        lin: Lin,
        cols: Vec<String>,
        value: Option<String>,
    },
}

enum Hit {
    Yes(Lin),
    Maybe(Lin),
    No,
}

impl Relation {
    fn lookup(&self, key: &str, display: &str) -> Hit {
        match &self.kind {
            RelKind::Table { known: Some(o), .. } | RelKind::Derived(o) => match o.get(key) {
                Some(c) => Hit::Yes(c.lin.clone()),
                None if o.star_tables.len() == 1 => {
                    Hit::Maybe(Lin::bare(o.star_tables.first().map(String::as_str).unwrap_or(""), display))
                }
                None => Hit::No,
            },
            RelKind::Table { name, known: None } => Hit::Maybe(Lin::bare(name, display)),
            RelKind::Generated { lin, cols, value } => {
                if cols.iter().any(|c| c == key) || value.as_deref() == Some(key) {
                    Hit::Yes(lin.clone())
                } else if cols.is_empty() && value.is_none() {
                    Hit::Maybe(lin.clone())
                } else {
                    Hit::No
                }
            }
        }
    }

    fn matches(&self, qual: &[String]) -> bool {
        match &self.alias {
            // `db.t.x` with `db.t` aliased: the table's written name still names it.
            Some(a) => {
                (qual.len() == 1 && qual.first() == Some(a))
                    || (qual.len() >= 2 && self.parts.len() >= 2 && self.parts.ends_with(qual))
            }
            None => !self.parts.is_empty() && self.parts.ends_with(qual),
        }
    }

    fn label(&self) -> String {
        match &self.kind {
            RelKind::Table { name, .. } => name.clone(),
            _ => self.alias.clone().or_else(|| self.parts.last().cloned()).unwrap_or_else(|| "subquery".into()),
        }
    }
}

#[derive(Clone, Copy)]
struct Scope<'a> {
    rels: &'a [Relation],
    parent: Option<&'a Scope<'a>>,
    using: &'a [String],
    aliases: &'a [OutCol],
}

const EMPTY_SCOPE: Scope<'static> = Scope { rels: &[], parent: None, using: &[], aliases: &[] };

pub(crate) struct Analyzer<'a> {
    dialect: Dialect,
    db: Option<String>,
    schema: Option<String>,
    catalog: &'a dyn Columns,
    catalog_cache: HashMap<String, Option<Rc<Output>>>,
    session: HashMap<String, Entry>,
    intermediate: HashSet<String>,
    /// The CTEs in scope: name, output, and the tables the CTE reads (sources of the statement
    /// once something reads the CTE).
    ctes: Vec<(String, Rc<Output>, Rc<Vec<String>>)>,
    tables: BTreeSet<String>,
    unresolved: Vec<String>,
    /// Why the statement being analysed is not valid SQL.
    errors: Vec<String>,
    /// In a procedure body: `SELECT ... INTO x` assigns variables (except in T-SQL).
    pub in_procedure: bool,
    /// Set by the last failed resolution: the name was a variable or pseudo-column, not a column.
    constant: bool,
    /// Inside subqueries of filters: nothing is reported unresolved.
    quiet: usize,
    /// What the data-modifying CTEs of the statement wrote (`WITH x AS (INSERT ... RETURNING)`).
    cte_writes: Vec<StmtResult>,
    /// Inside a trigger's body: the table it is on (`inserted`/`deleted`, `NEW.c`/`OLD.c` are its rows).
    trigger_table: Option<String>,
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

impl<'a> Analyzer<'a> {
    pub fn new(
        dialect: Dialect,
        options: &Options,
        catalog: &'a dyn Columns,
        intermediate: HashSet<String>,
    ) -> Analyzer<'a> {
        Analyzer {
            dialect,
            db: options.default_database.clone(),
            schema: options.default_schema.clone(),
            catalog,
            catalog_cache: HashMap::new(),
            session: HashMap::new(),
            intermediate,
            ctes: Vec::new(),
            tables: BTreeSet::new(),
            unresolved: Vec::new(),
            errors: Vec::new(),
            in_procedure: false,
            constant: false,
            quiet: 0,
            cte_writes: Vec::new(),
            trigger_table: None,
        }
    }

    fn fold(&self, id: &Ident) -> String {
        fold(id, self.dialect)
    }

    /// The trigger whose body the next statements come from (its table as written), or none.
    pub(crate) fn set_trigger(&mut self, table: Option<&str>) {
        self.trigger_table = table.and_then(|t| {
            let d = self.dialect.parser_dialect();
            let name = Parser::new(&*d).try_with_sql(t).ok()?.parse_object_name(false).ok()?;
            Some(self.qualify(&name))
        });
    }

    fn qualify(&self, name: &ObjectName) -> String {
        qualify_parts(&name_parts(name, self.dialect), self.db.as_deref(), self.schema.as_deref())
    }

    fn unresolved(&mut self, msg: String) {
        if self.quiet == 0 && !self.unresolved.contains(&msg) {
            self.unresolved.push(msg);
        }
    }

    fn catalog_output(&mut self, table: &str) -> Option<Rc<Output>> {
        if let Some(hit) = self.catalog_cache.get(table) {
            return hit.clone();
        }
        let out = self.catalog.columns(table).map(|cols| {
            Rc::new(Output::new(
                cols.into_iter().map(|c| OutCol { lin: Lin::bare(table, &c), name: c }).collect(),
                Vec::new(),
            ))
        });
        self.catalog_cache.insert(table.to_string(), out.clone());
        out
    }

    /// Column names of a target table: from the session, else the catalog.
    fn target_columns(&mut self, table: &str) -> Option<Vec<String>> {
        if let Some(e) = self.session.get(&lower(table)) {
            if !e.out.cols.is_empty() {
                return Some(e.out.cols.iter().map(|c| c.name.clone()).collect());
            }
        }
        self.catalog_output(table).map(|o| o.cols.iter().map(|c| c.name.clone()).collect())
    }

    /// Analyses one statement of the call. `word` is its first keyword, the operation of
    /// statements that move no data.
    pub(crate) fn statement(&mut self, st: &Statement, word: &str) -> StmtResult {
        self.tables.clear();
        self.unresolved.clear();
        self.ctes.clear();
        self.cte_writes.clear();
        let mut r = self.dispatch(st, word);
        for w in std::mem::take(&mut self.cte_writes) {
            for t in w.targets {
                if !r.targets.contains(&t) {
                    r.targets.push(t);
                }
            }
            r.columns.extend(w.columns);
        }
        let targets_l: HashSet<String> = r.targets.iter().map(|t| lower(t)).collect();
        r.sources = self.tables.iter().filter(|t| !targets_l.contains(&lower(t))).cloned().collect();
        r.sources.sort();
        r.sources.dedup();
        r.unresolved = std::mem::take(&mut self.unresolved);
        r.errors = std::mem::take(&mut self.errors);
        if !r.errors.is_empty() {
            r.targets.clear();
            r.sources.clear();
            r.columns.clear();
        }
        r
    }

    fn dispatch(&mut self, st: &Statement, word: &str) -> StmtResult {
        let op = |s: &str| StmtResult { operation: s.to_string(), ..StmtResult::default() };
        match st {
            Statement::Query(q) => self.query_statement(q),
            Statement::Insert(i) => self.insert(i),
            Statement::Update(u) => self.update(u),
            Statement::Delete(d) => self.delete(d),
            Statement::Merge(m) => self.merge(m),
            Statement::CreateTable(ct) => self.create_table(ct),
            Statement::CreateView(cv) => self.create_view(cv),
            Statement::Copy { source, to, target, .. } => {
                let mut r = op("COPY");
                r.external_location = match target {
                    CopyTarget::File { filename } => Some(filename.clone()),
                    CopyTarget::Program { command } => Some(command.clone()),
                    _ => None,
                };
                match source {
                    CopySource::Table { table_name, .. } => {
                        let t = self.qualify(table_name);
                        if *to {
                            self.tables.insert(t);
                        } else {
                            r.targets.push(t);
                            // `COPY t FROM 's3://...'`: the file is read.
                            if let CopyTarget::File { filename } = target {
                                self.tables.insert(filename.clone());
                            }
                        }
                    }
                    CopySource::Query(q) => {
                        let _ = self.query(q, None);
                    }
                }
                // `COPY ... TO 'file'`: the file is what is written.
                if *to || matches!(source, CopySource::Query(_)) {
                    r.targets.extend(r.external_location.iter().cloned());
                }
                r
            }
            Statement::CopyIntoSnowflake { kind, into, from_obj, from_query, stage_params, .. } => {
                let mut r = op("COPY");
                let location = |n: &ObjectName| n.to_string().trim_matches('\'').to_string();
                match kind {
                    sqlparser::ast::CopyIntoSnowflakeKind::Table => {
                        r.targets.push(self.qualify(into));
                        r.external_location = from_obj.as_ref().map(location).or_else(|| stage_params.url.clone());
                        // The stage or path loaded from is read.
                        self.tables.extend(r.external_location.iter().cloned());
                    }
                    sqlparser::ast::CopyIntoSnowflakeKind::Location => {
                        r.external_location = Some(location(into));
                        r.targets.push(location(into));
                        if let Some(o) = from_obj {
                            let _ = self.table_relation(o, None);
                        }
                    }
                }
                if let Some(q) = from_query {
                    let _ = self.query(q, None);
                }
                r
            }
            Statement::Unload { query, query_text, to, .. } => {
                let mut r = op("UNLOAD");
                if let Some(q) = query {
                    let _ = self.query(q, None);
                }
                if let Some(text) = query_text {
                    // Redshift quotes the query; it is parsed here, once, as its own text.
                    match super::parse(text, &*self.dialect.parser_dialect(), true, 256) {
                        Ok(stmts) => {
                            for st in &stmts {
                                if let Statement::Query(q) = st {
                                    let _ = self.query(q, None);
                                }
                            }
                        }
                        Err(e) => self.unresolved(format!("UNLOAD query: {e}")),
                    }
                }
                r.external_location = Some(to.value.clone());
                r.targets.push(to.value.clone());
                r
            }
            // BigQuery `EXPORT DATA OPTIONS (uri = 'gs://...', ...) AS SELECT ...`: a write to a path.
            Statement::ExportData(e) => {
                let mut r = op("UNLOAD");
                let _ = self.query(&e.query, None);
                let uri = e.options.iter().find_map(|o| match o {
                    sqlparser::ast::SqlOption::KeyValue { key, value: Expr::Value(v) }
                        if key.to_string().eq_ignore_ascii_case("uri") =>
                    {
                        match &v.value {
                            sqlparser::ast::Value::SingleQuotedString(s)
                            | sqlparser::ast::Value::DoubleQuotedString(s) => Some(s.clone()),
                            _ => None,
                        }
                    }
                    _ => None,
                });
                if let Some(u) = uri {
                    r.targets.push(u.clone());
                    r.external_location = Some(u);
                }
                r
            }
            Statement::Directory { path, source, .. } => {
                let mut r = op("INSERT_OVERWRITE");
                let _ = self.query(source, None);
                r.external_location = Some(path.clone());
                r.targets.push(path.clone());
                r
            }
            Statement::LoadData { inpath, table_name, .. } => {
                let mut r = op("LOAD");
                r.targets.push(self.qualify(table_name));
                r.external_location = Some(inpath.clone());
                self.tables.insert(inpath.clone());
                r
            }
            Statement::Use(u) => {
                apply_use(u, self.dialect, &mut self.db, &mut self.schema);
                op("USE")
            }
            Statement::Set(set) => {
                apply_search_path(set, self.dialect, &mut self.schema);
                op(word)
            }
            Statement::Drop { names, .. } => {
                for n in names {
                    let k = lower(&self.qualify(n));
                    self.session.remove(&k);
                }
                op("DROP")
            }
            Statement::AlterTable(at) => {
                let mut r = op(word);
                for o in &at.operations {
                    match o {
                        sqlparser::ast::AlterTableOperation::RenameTable { table_name } => {
                            let (sqlparser::ast::RenameTableNameKind::To(new)
                            | sqlparser::ast::RenameTableNameKind::As(new)) = table_name;
                            r.operation = "RENAME".into();
                            self.rename(&at.name, new, &mut r);
                        }
                        sqlparser::ast::AlterTableOperation::SwapWith { table_name } => {
                            r.operation = "SWAP".into();
                            self.swap(&at.name, table_name, &mut r);
                        }
                        _ => {}
                    }
                }
                r
            }
            Statement::RenameTable(renames) => {
                let mut r = op("RENAME");
                for x in renames {
                    self.rename(&x.old_name, &x.new_name, &mut r);
                }
                r
            }
            // `TRUNCATE [TABLE] a, b`: empties its tables, as a DELETE without WHERE does.
            Statement::Truncate(t) => {
                let mut r = op("TRUNCATE");
                for n in &t.table_names {
                    let q = self.qualify(&n.name);
                    if !r.targets.contains(&q) {
                        r.targets.push(q);
                    }
                }
                r
            }
            Statement::CreateProcedure { .. } | Statement::CreateFunction(_) => op("CREATE_PROCEDURE"),
            // Spark `CACHE TABLE c AS SELECT ...`: a temporary view of the session.
            Statement::Cache { table_name, query: Some(q), .. } => {
                let target = self.qualify(table_name);
                let out = self.query(q, None);
                self.created_from(target, &[], &out, true, true)
            }
            _ => op(word),
        }
    }

    fn query_statement(&mut self, q: &Query) -> StmtResult {
        if let SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) | SetExpr::Merge(s) = &*q.body {
            // `WITH ... INSERT/UPDATE/DELETE/MERGE`: the CTEs are visible to the statement.
            let mark = self.ctes.len();
            if let Some(with) = &q.with {
                for cte in &with.cte_tables {
                    let names: Vec<String> = cte.alias.columns.iter().map(|c| self.fold(&c.name)).collect();
                    let (out, read) = match &*cte.query.body {
                        SetExpr::Delete(st) | SetExpr::Update(st) => {
                            (self.returning(st, None).renamed(&names), Vec::new())
                        }
                        // `WITH x AS (INSERT ... RETURNING ...)` writes its table too (reported as
                        // one more target) and hands on what it returns. (An UPDATE or DELETE
                        // there is a source of the statement, which a target could not be.)
                        SetExpr::Insert(st) => match st {
                            Statement::Insert(i) => {
                                let w = self.insert(i);
                                let out = self.insert_returning(i, &w);
                                self.cte_writes.push(w);
                                (out.renamed(&names), Vec::new())
                            }
                            _ => (Output::default(), Vec::new()),
                        },
                        _ => self.cte(cte, with.recursive, None),
                    };
                    self.ctes.push((lower(&cte.alias.name.value), Rc::new(out), Rc::new(read)));
                }
            }
            let r = self.dispatch(s, "SELECT");
            self.ctes.truncate(mark);
            return r;
        }
        let into_target = select_into(&q.body).and_then(|into| {
            let first = into.targets.first()?;
            let ids: Vec<Ident> = match first {
                Expr::Identifier(id) => vec![id.clone()],
                Expr::CompoundIdentifier(ids) => ids.clone(),
                _ => return None,
            };
            let name = ObjectName(ids.into_iter().map(ObjectNamePart::Identifier).collect());
            let first_part = idents(&name).first().map(|i| i.value.clone()).unwrap_or_default();
            if first_part.starts_with('@') || first_part.starts_with(':') {
                return None;
            }
            let variable = self.in_procedure
                && self.dialect != Dialect::TSql
                && !into.temporary
                && !into.table
                && !first_part.starts_with('#');
            if variable || into.targets.len() > 1 {
                return None;
            }
            Some((name, into.temporary || first_part.starts_with('#')))
        });
        let out = self.query(q, None);
        let Some((name, temp)) = into_target else {
            return StmtResult { operation: "SELECT".into(), ..StmtResult::default() };
        };
        let target = self.qualify(&name);
        self.created_from(target, &[], &out, temp, false)
    }
}
