//! Lineage of one parsed statement: which tables it writes and reads, and for each written column
//! the base-table columns its value is computed from.
//!
//! One pass over the tree. A query yields an [`Output`]: its columns in order, each with a [`Lin`]
//! (the set of base-table columns it reads, and whether it is more than a bare copy). A `SELECT`
//! builds the relations of its `FROM` (tables, CTEs, derived tables, table functions, `LATERAL
//! VIEW`s) into a [`Scope`], then computes each select item's lineage by visiting its expression
//! with a `sqlparser` [`Visitor`]: every column reference is resolved through the scope chain
//! (inner query first, then the outer ones for correlated subqueries), and every subquery met inside
//! an expression is analysed as a query of its own, its output columns becoming sources. Filters
//! (`WHERE`, `JOIN ... ON`, `GROUP BY`, `HAVING`, `QUALIFY`) are visited only for the subqueries in
//! them, which add table-level sources but never column sources.
//!
//! CTE outputs are computed once, where they are defined, and shared by `Rc`. Tables created
//! earlier in the call live in the [`Session`]; see the parent module for when they collapse.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::ControlFlow;
use std::rc::Rc;

use sqlparser::ast::{
    AccessExpr, AssignmentTarget, BinaryOperator, CopySource, CopyTarget, CreateTable, CreateView, Delete, Expr,
    FromTable, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident, Insert, JoinConstraint,
    JoinOperator, Merge, MergeAction, MergeInsertKind, MergeUpdateKind, NamedWindowDefinition, NamedWindowExpr,
    ObjectName, ObjectNamePart, ObjectType, OutputClause, Query, Select, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, Statement, TableAlias, TableFactor, TableObject, TableWithJoins, Update, UpdateTableFromKind, Use, Visit,
    Visitor, WildcardAdditionalOptions, WindowType,
};

use sqlparser::parser::Parser;

use super::{ColumnLineage, Columns, Dialect, Options};

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

/// A table or view created earlier in the call.
#[derive(Debug)]
pub(crate) struct Entry {
    kind: EntryKind,
    /// Column lineage (for `Table`, bare references to the table itself).
    out: Rc<Output>,
    /// Table-level sources, already collapsed (used for `Intermediate`).
    sources: BTreeSet<String>,
}

/// What a statement means, before the parent module adds index, text and errors.
#[derive(Default)]
pub(crate) struct StmtResult {
    pub operation: String,
    pub targets: Vec<String>,
    pub sources: Vec<String>,
    pub columns: Vec<ColumnLineage>,
    pub unresolved: Vec<String>,
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
            Some(a) => qual.len() == 1 && qual.first() == Some(a),
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

const FLATTEN_COLS: &[&str] = &["seq", "key", "path", "index", "value", "this"];

/// Niladic functions and pseudo-columns that parse as identifiers.
const PSEUDO: &[&str] = &[
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "session_user",
    "system_user",
    "user",
    "sysdate",
    "systimestamp",
    "localtime",
    "localtimestamp",
    "rownum",
    "rowid",
    "level",
    "current_schema",
    "current_database",
    "current_role",
    "current_catalog",
    "null",
    "true",
    "false",
    "default",
    "getdate",
];

/// Functions whose bare-word arguments can be date parts (`DATEADD(day, 1, x)`).
const DATE_FUNCS: &[&str] = &[
    "dateadd",
    "datediff",
    "datediff_big",
    "datepart",
    "datename",
    "date_part",
    "date_trunc",
    "datetrunc",
    "timestampadd",
    "timestampdiff",
    "timeadd",
    "timediff",
    "time_slice",
    "date_diff",
    "date_add",
    "date_sub",
    "timestamp_trunc",
    "datetime_trunc",
    "time_trunc",
    "timestamp_diff",
    "datetime_diff",
    "timestamp_add",
    "timestamp_sub",
    "datetime_add",
    "datetime_sub",
    "last_day",
    "extract",
    "date_from_parts",
    "trunc",
];

const DATE_PARTS: &[&str] = &[
    "year",
    "years",
    "yy",
    "yyyy",
    "y",
    "quarter",
    "qq",
    "q",
    "month",
    "months",
    "mm",
    "m",
    "mon",
    "week",
    "weeks",
    "wk",
    "ww",
    "isoweek",
    "isoyear",
    "day",
    "days",
    "dd",
    "d",
    "dy",
    "dayofyear",
    "dayofweek",
    "weekday",
    "dw",
    "hour",
    "hours",
    "hh",
    "minute",
    "minutes",
    "mi",
    "n",
    "second",
    "seconds",
    "ss",
    "s",
    "millisecond",
    "ms",
    "microsecond",
    "mcs",
    "us",
    "nanosecond",
    "ns",
    "epoch",
    "date",
    "time",
    "datetime",
    "timestamp",
];

pub(crate) struct Analyzer<'a> {
    dialect: Dialect,
    db: Option<String>,
    schema: Option<String>,
    catalog: &'a dyn Columns,
    catalog_cache: HashMap<String, Option<Rc<Output>>>,
    session: HashMap<String, Entry>,
    intermediate: HashSet<String>,
    ctes: Vec<(String, Rc<Output>)>,
    tables: BTreeSet<String>,
    unresolved: Vec<String>,
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

/// Folds an identifier as the dialect folds unquoted names.
fn fold(id: &Ident, dialect: Dialect) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else if dialect.folds_upper() {
        id.value.to_uppercase()
    } else if dialect.folds_lower() {
        id.value.to_lowercase()
    } else {
        id.value.clone()
    }
}

fn idents(name: &ObjectName) -> Vec<&Ident> {
    name.0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(i),
            _ => None,
        })
        .collect()
}

/// Name parts, folded; a BigQuery back-quoted `a.b.c` counts as three parts.
fn name_parts(name: &ObjectName, dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    for id in idents(name) {
        if dialect == Dialect::BigQuery && id.quote_style == Some('`') && id.value.contains('.') {
            out.extend(id.value.split('.').map(str::to_string));
        } else {
            out.push(fold(id, dialect));
        }
    }
    out
}

fn is_local_temp(first: &str) -> bool {
    first.starts_with('#') || first.starts_with('@')
}

fn qualify_parts(parts: &[String], db: Option<&str>, schema: Option<&str>) -> String {
    if parts.first().is_some_and(|p| is_local_temp(p)) {
        return parts.join(".");
    }
    // Spark/Delta path tables, `delta.`s3://b/p``: the path is the table.
    if let Some(path) = parts.last().filter(|p| parts.len() <= 2 && (p.contains("://") || p.starts_with('/'))) {
        return path.clone();
    }
    let mut full: Vec<&str> = Vec::with_capacity(3);
    match parts.len() {
        1 => {
            if let Some(s) = schema {
                if let Some(d) = db {
                    full.push(d);
                }
                full.push(s);
            } else if let Some(d) = db {
                full.push(d);
            }
        }
        2 => {
            if let Some(d) = db {
                full.push(d);
            }
        }
        _ => {}
    }
    full.extend(parts.iter().map(String::as_str));
    full.join(".")
}

/// Applies `USE ...` to the defaults.
fn apply_use(u: &Use, dialect: Dialect, db: &mut Option<String>, schema: &mut Option<String>) {
    let two_level = matches!(dialect, Dialect::MySql | Dialect::MariaDb | Dialect::Hive | Dialect::SparkSql);
    let parts = |n: &ObjectName| name_parts(n, dialect);
    match u {
        Use::Catalog(n) | Use::Database(n) => *db = parts(n).last().cloned(),
        Use::Schema(n) => {
            let p = parts(n);
            if p.len() >= 2 {
                *db = p.get(p.len() - 2).cloned();
            }
            *schema = p.last().cloned();
        }
        Use::Object(n) => {
            let p = parts(n);
            if p.len() >= 2 {
                *db = p.get(p.len() - 2).cloned();
                *schema = p.last().cloned();
            } else if two_level && schema.is_some() {
                *schema = p.last().cloned();
            } else {
                *db = p.last().cloned();
            }
        }
        _ => {}
    }
}

/// Postgres/Redshift `SET search_path TO a, b`: the first schema becomes the default one.
fn apply_search_path(set: &sqlparser::ast::Set, dialect: Dialect, schema: &mut Option<String>) {
    if !matches!(dialect, Dialect::Postgres | Dialect::Redshift) {
        return;
    }
    if let sqlparser::ast::Set::SingleAssignment { variable, values, .. } = set {
        if !variable.to_string().eq_ignore_ascii_case("search_path") {
            return;
        }
        let first = match values.first() {
            Some(Expr::Identifier(id)) => Some(fold(id, dialect)),
            Some(Expr::Value(v)) => match &v.value {
                sqlparser::ast::Value::SingleQuotedString(s) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        };
        // `"$user"` and `public` first: the tables named are in the schema after it, or public.
        if let Some(f) = first.filter(|f| f != "$user") {
            *schema = Some(f);
        }
    }
}

/// The tables that collapse (see the parent module): created as temporary, or created and then
/// dropped later in the same call. Keys are lower-cased qualified names.
pub(crate) fn intermediate_tables<'s>(
    statements: impl Iterator<Item = &'s Statement>,
    dialect: Dialect,
    options: &Options,
) -> HashSet<String> {
    let mut db = options.default_database.clone();
    let mut schema = options.default_schema.clone();
    let mut created: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for (i, st) in statements.enumerate() {
        let key = |n: &ObjectName, db: &Option<String>, schema: &Option<String>| {
            qualify_parts(&name_parts(n, dialect), db.as_deref(), schema.as_deref()).to_lowercase()
        };
        match st {
            Statement::Use(u) => apply_use(u, dialect, &mut db, &mut schema),
            Statement::Set(set) => apply_search_path(set, dialect, &mut schema),
            Statement::CreateTable(ct) => {
                let k = key(&ct.name, &db, &schema);
                if ct.temporary || ct.volatile || is_local_temp(&k) {
                    out.insert(k.clone());
                }
                created.insert(k, i);
            }
            Statement::CreateView(cv) => {
                let k = key(&cv.name, &db, &schema);
                if cv.temporary {
                    out.insert(k.clone());
                }
                created.insert(k, i);
            }
            Statement::Drop { names, object_type: ObjectType::Table | ObjectType::View, .. } => {
                for n in names {
                    let k = key(n, &db, &schema);
                    if created.contains_key(&k) {
                        out.insert(k);
                    }
                }
            }
            Statement::Query(q) => {
                if let Some(into) = select_into(&q.body) {
                    if let Some(Expr::Identifier(id)) = into.targets.first() {
                        if into.temporary || is_local_temp(&id.value) {
                            out.insert(id.value.to_lowercase());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn select_into(body: &SetExpr) -> Option<&sqlparser::ast::SelectInto> {
    match body {
        SetExpr::Select(s) => s.into.as_ref(),
        SetExpr::SetOperation { left, .. } => select_into(left),
        SetExpr::Query(q) => select_into(&q.body),
        _ => None,
    }
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// The identifiers of a bare column reference (`a`, `t.a`, `(t.a)`), if `e` is one.
fn bare_ref(e: &Expr) -> bool {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Nested(inner) => bare_ref(inner),
        _ => false,
    }
}

/// The (lower-cased) column names referenced in `e`.
fn column_names(e: &Expr, out: &mut HashSet<String>) {
    let _ = sqlparser::ast::visit_expressions(e, |x| {
        match x {
            Expr::Identifier(id) => {
                out.insert(lower(&id.value));
            }
            Expr::CompoundIdentifier(ids) => {
                if let Some(last) = ids.last() {
                    out.insert(lower(&last.value));
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
}

fn join_constraint(op: &JoinOperator) -> (Option<&JoinConstraint>, Option<&Expr>) {
    match op {
        JoinOperator::Join(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::FullOuter(c)
        | JoinOperator::CrossJoin(c)
        | JoinOperator::Semi(c)
        | JoinOperator::LeftSemi(c)
        | JoinOperator::RightSemi(c)
        | JoinOperator::Anti(c)
        | JoinOperator::LeftAnti(c)
        | JoinOperator::RightAnti(c)
        | JoinOperator::StraightJoin(c) => (Some(c), None),
        JoinOperator::AsOf { match_condition, constraint } => (Some(constraint), Some(match_condition)),
        _ => (None, None),
    }
}

/// The expression visitor: resolves column references and analyses subqueries.
struct Walker<'w, 'a> {
    an: &'w mut Analyzer<'a>,
    scope: &'w Scope<'w>,
    windows: &'w [NamedWindowDefinition],
    lin: Lin,
    collect: bool,
    depth: usize,
    skip: Vec<usize>,
    lambda: Vec<String>,
    last_derived: Option<bool>,
}

impl Visitor for Walker<'_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            // A subquery in a filter (`EXISTS (SELECT * ...)`) only adds tables: what its own
            // columns resolve to is nobody's lineage, so it reports nothing unresolved.
            self.an.quiet += usize::from(!self.collect);
            let out = self.an.query(q, Some(self.scope));
            self.an.quiet -= usize::from(!self.collect);
            if self.collect {
                for c in &out.cols {
                    self.lin.sources.extend(c.lin.sources.iter().cloned());
                }
            }
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth = self.depth.saturating_sub(1);
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth > 0 || !self.collect {
            return ControlFlow::Continue(());
        }
        match e {
            Expr::Lambda(l) => {
                for p in l.params.iter() {
                    self.lambda.push(lower(&p.name.value));
                }
            }
            Expr::BinaryOp { left, op: BinaryOperator::Arrow, .. } if self.arrow_is_lambda(left) => {
                self.lambda.extend(lambda_params(left));
            }
            Expr::Function(f) => {
                let fname = f.name.0.last().and_then(|p| p.as_ident()).map(|i| lower(&i.value)).unwrap_or_default();
                if DATE_FUNCS.contains(&fname.as_str()) {
                    if let FunctionArguments::List(list) = &f.args {
                        for a in &list.args {
                            if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x @ Expr::Identifier(id))) = a {
                                if id.quote_style.is_none() && DATE_PARTS.contains(&lower(&id.value).as_str()) {
                                    self.skip.push(x as *const Expr as usize);
                                }
                            }
                        }
                    }
                }
                if let Some(WindowType::NamedWindow(w)) = &f.over {
                    self.named_window(&lower(&w.value), 0);
                }
            }
            Expr::Identifier(id) => {
                let addr = e as *const Expr as usize;
                if self.skip.contains(&addr) || self.lambda.contains(&lower(&id.value)) {
                    return ControlFlow::Continue(());
                }
                let r = self.an.resolve(self.scope, std::slice::from_ref(id));
                self.absorb(r);
            }
            Expr::CompoundIdentifier(ids) => {
                let addr = e as *const Expr as usize;
                if self.skip.contains(&addr) || ids.first().is_some_and(|f| self.lambda.contains(&lower(&f.value))) {
                    return ControlFlow::Continue(());
                }
                let r = self.an.resolve(self.scope, ids);
                self.absorb(r);
            }
            // `t.arr[1]`, `col.field[0].x`, `(t.rec).field`: the leading names are one column
            // reference (qualifier and struct fields included); the names after a `.` further on
            // are fields, not columns. Subscripts are visited as expressions.
            Expr::CompoundFieldAccess { root, access_chain } => {
                let mut ids: Vec<Ident> = match &**root {
                    Expr::Identifier(id) => vec![id.clone()],
                    Expr::CompoundIdentifier(ids) => ids.clone(),
                    // Oracle's `:NEW.c` in a trigger.
                    Expr::Value(v) => match &v.value {
                        sqlparser::ast::Value::Placeholder(p) if self.an.trigger_table.is_some() => {
                            vec![Ident::new(p.clone())]
                        }
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                let lead = !ids.is_empty();
                if lead {
                    self.skip.push(&**root as *const Expr as usize);
                }
                let mut in_lead = lead;
                for a in access_chain {
                    match a {
                        AccessExpr::Dot(x @ (Expr::Identifier(_) | Expr::CompoundIdentifier(_))) => {
                            if in_lead {
                                match x {
                                    Expr::Identifier(id) => ids.push(id.clone()),
                                    Expr::CompoundIdentifier(more) => ids.extend(more.iter().cloned()),
                                    _ => {}
                                }
                            }
                            self.skip.push(x as *const Expr as usize);
                        }
                        _ => in_lead = false,
                    }
                }
                if lead && !ids.first().is_some_and(|f| self.lambda.contains(&lower(&f.value))) {
                    let r = self.an.resolve(self.scope, &ids);
                    self.absorb(r);
                    self.last_derived = Some(true);
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 && self.collect {
            if let Expr::Lambda(l) = e {
                for _ in l.params.iter() {
                    self.lambda.pop();
                }
            }
            if let Expr::BinaryOp { left, op: BinaryOperator::Arrow, .. } = e {
                if self.arrow_is_lambda(left) {
                    for _ in lambda_params(left) {
                        self.lambda.pop();
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// The parameter names of `x -> ...` / `(a, b) -> ...` parsed as an arrow operator.
fn lambda_params(left: &Expr) -> Vec<String> {
    match left {
        Expr::Identifier(id) => vec![lower(&id.value)],
        Expr::Nested(inner) => lambda_params(inner),
        Expr::Tuple(es) => es.iter().flat_map(lambda_params).collect(),
        _ => Vec::new(),
    }
}

impl Walker<'_, '_> {
    /// Trino's `->` is only ever a lambda (its parser here reads it as the JSON arrow); elsewhere
    /// a parenthesised list of names before `->` can only be lambda parameters.
    fn arrow_is_lambda(&self, left: &Expr) -> bool {
        let names = !lambda_params(left).is_empty();
        names && (self.an.dialect == Dialect::Trino || matches!(left, Expr::Tuple(_)))
    }

    fn absorb(&mut self, r: Option<Lin>) {
        match r {
            Some(l) => {
                self.last_derived = Some(l.derived);
                self.lin.sources.extend(l.sources);
            }
            // A variable or pseudo-column is a value, not a copied column; an unresolved column
            // is still a bare reference.
            None => self.last_derived = Some(self.an.constant),
        }
    }

    /// `OVER w`: the named window's PARTITION BY / ORDER BY belong to the expression.
    fn named_window(&mut self, name: &str, hops: usize) {
        let windows = self.windows;
        let Some(def) = windows.iter().find(|d| lower(&d.0.value) == name) else {
            return;
        };
        match &def.1 {
            NamedWindowExpr::WindowSpec(spec) => {
                for e in &spec.partition_by {
                    let _ = e.visit(self);
                }
                for o in &spec.order_by {
                    let _ = o.expr.visit(self);
                }
            }
            NamedWindowExpr::NamedWindow(other) if hops < 8 => self.named_window(&lower(&other.value), hops + 1),
            NamedWindowExpr::NamedWindow(_) => {}
        }
    }
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

    // ---- resolution ----

    fn resolve(&mut self, scope: &Scope, ids: &[Ident]) -> Option<Lin> {
        self.constant = false;
        // `NEW.c` / `OLD.c` (`:NEW.c` in Oracle) in a trigger: the trigger table's column.
        if let (Some(t), [first, col]) = (&self.trigger_table, ids) {
            let f = lower(first.value.trim_start_matches(':'));
            if (f == "new" || f == "old") && !scope.rels.iter().any(|r| r.matches(std::slice::from_ref(&f))) {
                let t = t.clone();
                self.tables.insert(t.clone());
                return Some(Lin::bare(&t, &self.fold(col)));
            }
        }
        if ids.len() >= 2 {
            let lowered: Vec<String> = ids.iter().map(|i| lower(&i.value)).collect();
            let mut s = Some(scope);
            while let Some(sc) = s {
                for k in (1..ids.len()).rev() {
                    let qual = lowered.get(..k).unwrap_or(&[]);
                    if let Some(rel) = sc.rels.iter().find(|r| r.matches(qual)) {
                        let id = ids.get(k)?;
                        let display = self.fold(id);
                        let key = lowered.get(k).map(String::as_str).unwrap_or("");
                        let mut lin = match rel.lookup(key, &display) {
                            Hit::Yes(l) | Hit::Maybe(l) => l,
                            Hit::No => match &rel.kind {
                                RelKind::Table { name, .. } => Lin::bare(name, &display),
                                RelKind::Generated { lin, .. } => lin.clone(),
                                RelKind::Derived(_) => {
                                    let msg = format!("column {}.{} not found", rel.label(), display);
                                    self.unresolved(msg);
                                    return None;
                                }
                            },
                        };
                        if k + 1 < ids.len() {
                            lin.derived = true;
                        }
                        return Some(lin);
                    }
                }
                s = sc.parent;
            }
            // No relation is called that: a struct field of a column (`col.field`).
            let mut lin = self.resolve_one(scope, ids.first()?)?;
            lin.derived = true;
            return Some(lin);
        }
        self.resolve_one(scope, ids.first()?)
    }

    fn resolve_one(&mut self, scope: &Scope, id: &Ident) -> Option<Lin> {
        self.constant = false;
        let v = &id.value;
        if id.quote_style.is_none() && (v.starts_with('@') || v.starts_with('$') || v.starts_with(':')) {
            self.constant = true;
            return None;
        }
        let key = lower(v);
        let pseudo = id.quote_style.is_none() && PSEUDO.contains(&key.as_str());
        let display = self.fold(id);
        let mut s = Some(scope);
        let mut any_relation = false;
        while let Some(sc) = s {
            any_relation |= !sc.rels.is_empty();
            let mut yes: Vec<(usize, Lin)> = Vec::new();
            let mut maybe: Vec<(usize, Lin)> = Vec::new();
            for (i, r) in sc.rels.iter().enumerate() {
                match r.lookup(&key, &display) {
                    Hit::Yes(l) => yes.push((i, l)),
                    Hit::Maybe(l) => maybe.push((i, l)),
                    Hit::No => {}
                }
            }
            if yes.len() == 1 || (yes.len() > 1 && sc.using.contains(&key)) {
                return yes.into_iter().next().map(|(_, l)| l);
            }
            if yes.len() > 1 {
                let names: Vec<String> = yes.iter().filter_map(|(i, _)| sc.rels.get(*i)).map(Relation::label).collect();
                self.unresolved(format!("column {display} is ambiguous: {}", names.join(", ")));
                return None;
            }
            if pseudo {
                self.constant = true;
                return None;
            }
            if let Some(c) = sc.aliases.iter().find(|c| lower(&c.name) == key) {
                return Some(c.lin.clone());
            }
            if maybe.len() == 1 {
                return maybe.into_iter().next().map(|(_, l)| l);
            }
            if maybe.len() > 1 {
                let names: Vec<String> =
                    maybe.iter().filter_map(|(i, _)| sc.rels.get(*i)).map(Relation::label).collect();
                self.unresolved(format!("column {display} is ambiguous: {}", names.join(", ")));
                return None;
            }
            s = sc.parent;
        }
        if pseudo || !any_relation {
            self.constant = true;
            return None;
        }
        self.unresolved(format!("column {display} not found"));
        None
    }

    // ---- expressions ----

    fn walker<'w>(
        &'w mut self,
        scope: &'w Scope<'w>,
        windows: &'w [NamedWindowDefinition],
        collect: bool,
    ) -> Walker<'w, 'a> {
        Walker {
            an: self,
            scope,
            windows,
            lin: Lin::default(),
            collect,
            depth: 0,
            skip: Vec::new(),
            lambda: Vec::new(),
            last_derived: None,
        }
    }

    /// The lineage of the value of `e`.
    fn expr_lin(&mut self, e: &Expr, scope: &Scope, windows: &[NamedWindowDefinition]) -> Lin {
        let mut w = self.walker(scope, windows, true);
        let _ = e.visit(&mut w);
        let derived = if bare_ref(e) { w.last_derived.unwrap_or(false) } else { true };
        Lin { sources: w.lin.sources, derived }
    }

    /// Visits `e` only for the subqueries in it (filters: table sources, no column sources).
    fn walk(&mut self, e: &Expr, scope: &Scope) {
        let mut w = self.walker(scope, &[], false);
        let _ = e.visit(&mut w);
    }

    fn args_lin(&mut self, args: &[FunctionArg], scope: &Scope) -> Lin {
        let mut lin = Lin { sources: BTreeSet::new(), derived: true };
        for a in args {
            let x = match a {
                FunctionArg::Named { arg, .. } | FunctionArg::ExprNamed { arg, .. } | FunctionArg::Unnamed(arg) => arg,
            };
            if let FunctionArgExpr::Expr(e) = x {
                let l = self.expr_lin(e, scope, &[]);
                lin.sources.extend(l.sources);
            }
        }
        lin
    }

    // ---- queries ----

    fn query(&mut self, q: &Query, outer: Option<&Scope>) -> Output {
        let mark = self.ctes.len();
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let key = lower(&cte.alias.name.value);
                let names: Vec<String> = cte.alias.columns.iter().map(|c| self.fold(&c.name)).collect();
                if with.recursive {
                    let placeholder = names.iter().map(|n| OutCol { name: n.clone(), lin: Lin::default() }).collect();
                    self.ctes.push((key.clone(), Rc::new(Output::new(placeholder, Vec::new()))));
                }
                let out = match &*cte.query.body {
                    // `WITH moved AS (DELETE ... RETURNING ...)`: the rows come from that table.
                    SetExpr::Delete(st) | SetExpr::Update(st) => self.returning(st, outer),
                    _ => self.query(&cte.query, outer),
                }
                .renamed(&names);
                if with.recursive {
                    self.ctes.pop();
                }
                self.ctes.push((key, Rc::new(out)));
            }
        }
        let out = self.set_expr(&q.body, outer);
        self.ctes.truncate(mark);
        out
    }

    /// The rows a `DELETE`/`UPDATE ... RETURNING` hands on: its items over the table it changes
    /// (and the tables of its `FROM`/`USING`).
    fn returning(&mut self, st: &Statement, outer: Option<&Scope>) -> Output {
        let (items, selection, mut joined): (&[SelectItem], Option<&Expr>, Vec<&TableWithJoins>) = match st {
            Statement::Delete(d) => {
                let from = match &d.from {
                    FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
                };
                (d.returning.as_deref().unwrap_or(&[]), d.selection.as_ref(), from.iter().collect())
            }
            Statement::Update(u) => (u.returning.as_deref().unwrap_or(&[]), u.selection.as_ref(), vec![&u.table]),
            _ => return Output::default(),
        };
        if let Statement::Delete(d) = st {
            joined.extend(d.using.iter().flatten());
        }
        if let Statement::Update(u) = st {
            if let Some(UpdateTableFromKind::BeforeSet(v) | UpdateTableFromKind::AfterSet(v)) = &u.from {
                joined.extend(v.iter());
            }
        }
        let mut rels = Vec::new();
        let mut using = Vec::new();
        let mut deferred = Vec::new();
        for twj in joined {
            self.join_item(twj, &mut rels, &mut using, &mut deferred, outer);
        }
        let scope = Scope { rels: &rels, parent: outer, using: &using, aliases: &[] };
        for e in deferred.iter().copied().chain(selection) {
            self.walk(e, &scope);
        }
        self.returned(items, &rels, &scope)
    }

    /// The rows an `INSERT ... RETURNING` hands on: its items over the inserted row, whose
    /// columns are what the insert `w` wrote (the table's own columns otherwise).
    fn insert_returning(&mut self, ins: &Insert, w: &StmtResult) -> Output {
        let (Some(items), Some(target), TableObject::TableName(name)) = (&ins.returning, w.targets.first(), &ins.table)
        else {
            return Output::default();
        };
        let prefix = format!("{target}.");
        let cols: Vec<OutCol> = w
            .columns
            .iter()
            .filter_map(|c| {
                let name = c.target.strip_prefix(&prefix)?;
                let sources = c
                    .sources
                    .iter()
                    .filter_map(|s| s.rsplit_once('.'))
                    .map(|(t, col)| (t.to_string(), col.to_string()))
                    .collect();
                Some(OutCol { name: name.to_string(), lin: Lin { sources, derived: c.derived } })
            })
            .collect();
        let rels = [Relation {
            alias: ins.table_alias.as_ref().map(|a| lower(&a.alias.value)),
            parts: name_parts(name, self.dialect).iter().map(|p| lower(p)).collect(),
            kind: RelKind::Derived(Rc::new(Output::new(cols, vec![target.clone()]))),
        }];
        let scope = Scope { rels: &rels, ..EMPTY_SCOPE };
        self.returned(items, &rels, &scope)
    }

    /// The columns a `RETURNING` list hands on over `rels`: its expressions, and `*` expanded
    /// over every relation.
    fn returned(&mut self, items: &[SelectItem], rels: &[Relation], scope: &Scope) -> Output {
        let mut cols = Vec::new();
        let mut stars = Vec::new();
        for item in items {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let lin = self.expr_lin(e, scope, &[]);
                    cols.push(OutCol { name: self.item_name(e), lin });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let lin = self.expr_lin(expr, scope, &[]);
                    cols.push(OutCol { name: self.fold(alias), lin });
                }
                SelectItem::Wildcard(opts) => {
                    for r in rels {
                        self.expand_rel(r, Some(opts), &mut cols, &mut stars, scope);
                    }
                }
                _ => {}
            }
        }
        Output::new(cols, stars)
    }

    fn set_expr(&mut self, se: &SetExpr, outer: Option<&Scope>) -> Output {
        match se {
            SetExpr::Select(s) => self.select(s, outer),
            SetExpr::Query(q) => self.query(q, outer),
            SetExpr::SetOperation { left, right, .. } => {
                let l = self.set_expr(left, outer);
                let r = self.set_expr(right, outer);
                let mut cols = l.cols;
                for (a, b) in cols.iter_mut().zip(r.cols.iter()) {
                    a.lin.merge(&b.lin);
                }
                let mut stars = l.star_tables;
                stars.extend(r.star_tables);
                Output::new(cols, stars)
            }
            SetExpr::Values(v) => {
                let scope = Scope { parent: outer, ..EMPTY_SCOPE };
                let mut cols: Vec<OutCol> = Vec::new();
                for row in &v.rows {
                    for (i, e) in row.iter().enumerate() {
                        let mut l = self.expr_lin(e, &scope, &[]);
                        l.derived = true;
                        match cols.get_mut(i) {
                            Some(c) => c.lin.merge(&l),
                            None => cols.push(OutCol { name: format!("column{}", i + 1), lin: l }),
                        }
                    }
                }
                Output::new(cols, Vec::new())
            }
            SetExpr::Table(t) => {
                let Some(name) = &t.table_name else {
                    return Output::default();
                };
                let mut parts: Vec<String> = Vec::new();
                if let Some(s) = &t.schema_name {
                    parts.push(s.value.clone());
                }
                parts.push(name.value.clone());
                let obj = ObjectName(parts.iter().map(|p| ObjectNamePart::Identifier(Ident::new(p))).collect());
                let rel = self.table_relation(&obj, None);
                let mut cols = Vec::new();
                let mut stars = Vec::new();
                self.expand_rel(&rel, None, &mut cols, &mut stars, &EMPTY_SCOPE);
                Output::new(cols, stars)
            }
            _ => Output::default(),
        }
    }

    fn alias_of(&self, alias: Option<&TableAlias>) -> (Option<String>, Vec<String>) {
        match alias {
            Some(a) => (Some(lower(&a.name.value)), a.columns.iter().map(|c| self.fold(&c.name)).collect()),
            None => (None, Vec::new()),
        }
    }

    fn table_relation(&mut self, name: &ObjectName, alias: Option<&TableAlias>) -> Relation {
        let parts = name_parts(name, self.dialect);
        let lparts: Vec<String> = parts.iter().map(|p| lower(p)).collect();
        let (alias, alias_cols) = self.alias_of(alias);
        if lparts.len() == 1 {
            let key = lparts.first().map(String::as_str).unwrap_or("");
            if let Some((_, o)) = self.ctes.iter().rev().find(|(k, _)| k == key) {
                let o = o.clone();
                return Relation { alias, parts: lparts, kind: RelKind::Derived(renamed_rc(o, &alias_cols)) };
            }
        }
        // A Snowflake stage (`@stage/path`) is a location, not a table; Oracle's and MySQL's
        // one-row `dual` holds no data anyone wrote.
        let stage = parts.first().is_some_and(|p| p.starts_with('@') && self.dialect == Dialect::Snowflake);
        if stage || (lparts.len() == 1 && lparts.first().is_some_and(|p| p == "dual")) {
            let lin = Lin { sources: BTreeSet::new(), derived: true };
            return Relation { alias, parts: lparts, kind: RelKind::Generated { lin, cols: Vec::new(), value: None } };
        }
        // T-SQL trigger pseudo-tables: the rows of the trigger's table.
        let pseudo = self.dialect == Dialect::TSql
            && lparts.len() == 1
            && lparts.first().is_some_and(|p| p == "inserted" || p == "deleted");
        let q = match (&self.trigger_table, pseudo) {
            (Some(t), true) => t.clone(),
            _ => qualify_parts(&parts, self.db.as_deref(), self.schema.as_deref()),
        };
        let key = lower(&q);
        let kind = if let Some(e) = self.session.get(&key) {
            match e.kind {
                EntryKind::Intermediate => {
                    let srcs: Vec<String> = e.sources.iter().cloned().collect();
                    let out = e.out.clone();
                    self.tables.extend(srcs);
                    RelKind::Derived(renamed_rc(out, &alias_cols))
                }
                EntryKind::View => {
                    let out = e.out.clone();
                    self.tables.insert(q.clone());
                    RelKind::Derived(renamed_rc(out, &alias_cols))
                }
                EntryKind::Table => {
                    let out = e.out.clone();
                    self.tables.insert(q.clone());
                    RelKind::Table { name: q, known: Some(out) }
                }
            }
        } else {
            self.tables.insert(q.clone());
            let known = self.catalog_output(&q);
            match known {
                Some(o) if !alias_cols.is_empty() => RelKind::Derived(renamed_rc(o, &alias_cols)),
                known => RelKind::Table { name: q, known },
            }
        };
        Relation { alias, parts: lparts, kind }
    }

    fn generated(
        &mut self,
        lin: Lin,
        alias: Option<&TableAlias>,
        default_cols: &[&str],
        value_alias: bool,
    ) -> Relation {
        let (alias, cols) = self.alias_of(alias);
        let mut cols: Vec<String> = cols.iter().map(|c| lower(c)).collect();
        if cols.is_empty() {
            cols = default_cols.iter().map(|c| c.to_string()).collect();
        }
        let value = if value_alias && cols.is_empty() { alias.clone() } else { None };
        Relation { alias, parts: Vec::new(), kind: RelKind::Generated { lin, cols, value } }
    }

    /// Adds the relations of `tf` to `rels`; ON conditions go to `deferred`.
    fn factor<'q>(
        &mut self,
        tf: &'q TableFactor,
        rels: &mut Vec<Relation>,
        using: &mut Vec<String>,
        deferred: &mut Vec<&'q Expr>,
        outer: Option<&Scope>,
    ) {
        let rel = {
            let sc = Scope { rels, parent: outer, using: &[], aliases: &[] };
            match tf {
                TableFactor::Table { name, alias, args: Some(args), .. } => {
                    let lin = self.args_lin(&args.args, &sc);
                    let flatten =
                        name_parts(name, self.dialect).last().is_some_and(|n| n.eq_ignore_ascii_case("flatten"));
                    Some(self.generated(lin, alias.as_ref(), if flatten { FLATTEN_COLS } else { &[] }, !flatten))
                }
                TableFactor::Table { name, alias, .. } => Some(self.table_relation(name, alias.as_ref())),
                TableFactor::SemanticView { name, alias, .. } => Some(self.table_relation(name, alias.as_ref())),
                TableFactor::Derived { subquery, alias, .. } => {
                    let (a, cols) = self.alias_of(alias.as_ref());
                    let out = self.query(subquery, Some(&sc)).renamed(&cols);
                    Some(Relation { alias: a, parts: Vec::new(), kind: RelKind::Derived(Rc::new(out)) })
                }
                TableFactor::TableFunction { expr, alias } => {
                    let mut lin = self.expr_lin(expr, &sc, &[]);
                    lin.derived = true;
                    let flatten = matches!(expr, Expr::Function(f) if f.name.0.last().and_then(|p| p.as_ident()).is_some_and(|i| i.value.eq_ignore_ascii_case("flatten")));
                    Some(self.generated(lin, alias.as_ref(), if flatten { FLATTEN_COLS } else { &[] }, !flatten))
                }
                TableFactor::Function { name, args, alias, .. } => {
                    let lin = self.args_lin(args, &sc);
                    let flatten =
                        name_parts(name, self.dialect).last().is_some_and(|n| n.eq_ignore_ascii_case("flatten"));
                    Some(self.generated(lin, alias.as_ref(), if flatten { FLATTEN_COLS } else { &[] }, !flatten))
                }
                TableFactor::UNNEST { alias, array_exprs, with_offset_alias, .. } => {
                    let mut lin = Lin { sources: BTreeSet::new(), derived: true };
                    for e in array_exprs {
                        lin.sources.extend(self.expr_lin(e, &sc, &[]).sources);
                    }
                    let mut r = self.generated(lin, alias.as_ref(), &[], true);
                    if let (Some(off), RelKind::Generated { cols, .. }) = (with_offset_alias, &mut r.kind) {
                        cols.push(lower(&off.value));
                    }
                    Some(r)
                }
                TableFactor::JsonTable { json_expr, alias, .. }
                | TableFactor::OpenJsonTable { json_expr, alias, .. } => {
                    let mut lin = self.expr_lin(json_expr, &sc, &[]);
                    lin.derived = true;
                    Some(self.generated(lin, alias.as_ref(), &[], false))
                }
                TableFactor::XmlTable { row_expression, alias, .. } => {
                    let mut lin = self.expr_lin(row_expression, &sc, &[]);
                    lin.derived = true;
                    Some(self.generated(lin, alias.as_ref(), &[], false))
                }
                TableFactor::Pivot { table, aggregate_functions, value_column, value_source, alias, .. } => {
                    Some(self.pivot(table, aggregate_functions, value_column, value_source, alias.as_ref(), outer))
                }
                TableFactor::Unpivot { table, value, name, columns, alias, .. } => {
                    Some(self.unpivot(table, value, name, columns, alias.as_ref(), outer))
                }
                TableFactor::NestedJoin { .. }
                | TableFactor::MatchRecognize { .. }
                | TableFactor::UnpivotExpr { .. } => None,
            }
        };
        if let Some(r) = rel {
            rels.push(r);
            return;
        }
        match tf {
            TableFactor::NestedJoin { table_with_joins, .. } => {
                self.join_item(table_with_joins, rels, using, deferred, outer)
            }
            TableFactor::MatchRecognize { table, alias, .. } => {
                let before = rels.len();
                self.factor(table, rels, using, deferred, outer);
                // The reshaped relation answers to the outer alias; its columns are not known.
                if rels.len() == before + 1 {
                    if let Some(r) = rels.last_mut() {
                        if let Some(a) = alias {
                            r.alias = Some(lower(&a.name.value));
                        }
                        if let RelKind::Table { known, .. } = &mut r.kind {
                            *known = None;
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The input of a PIVOT or UNPIVOT: its relation, and the names its other clauses use.
    fn reshaped_input(&mut self, table: &TableFactor, outer: Option<&Scope>) -> Vec<Relation> {
        let mut inner = Vec::new();
        let mut using = Vec::new();
        let mut deferred = Vec::new();
        self.factor(table, &mut inner, &mut using, &mut deferred, outer);
        let sc = Scope { rels: &inner, parent: outer, using: &using, aliases: &[] };
        for e in &deferred {
            self.walk(e, &sc);
        }
        inner
    }

    /// The columns of `inner` not consumed by a PIVOT or UNPIVOT (they pass through), and the
    /// tables whose columns are unknown.
    fn passthrough(&self, inner: &[Relation], used: &HashSet<String>) -> (Vec<OutCol>, Vec<String>) {
        let keep = |c: &&OutCol| !used.contains(&lower(&c.name));
        match inner.first().map(|r| &r.kind) {
            Some(RelKind::Table { known: Some(o), .. }) | Some(RelKind::Derived(o)) => {
                (o.cols.iter().filter(keep).cloned().collect(), o.star_tables.clone())
            }
            Some(RelKind::Table { name, known: None }) => (Vec::new(), vec![name.clone()]),
            Some(RelKind::Generated { lin, cols, .. }) => (
                cols.iter()
                    .filter(|c| !used.contains(*c))
                    .map(|c| OutCol { name: c.clone(), lin: lin.clone() })
                    .collect(),
                Vec::new(),
            ),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// `PIVOT (agg(x) FOR k IN (v1, v2))`: one column per value (per value and aggregate), computed
    /// like `agg(CASE WHEN k = v1 THEN x END)`, so from `x` and `k`; the other columns pass through.
    fn pivot(
        &mut self,
        table: &TableFactor,
        aggregates: &[sqlparser::ast::ExprWithAlias],
        value_column: &[Expr],
        values: &sqlparser::ast::PivotValueSource,
        alias: Option<&TableAlias>,
        outer: Option<&Scope>,
    ) -> Relation {
        let inner = self.reshaped_input(table, outer);
        let sc = Scope { rels: &inner, parent: outer, using: &[], aliases: &[] };
        let mut used = HashSet::new();
        let mut key = Lin { sources: BTreeSet::new(), derived: true };
        for e in value_column {
            column_names(e, &mut used);
            key.sources.extend(self.expr_lin(e, &sc, &[]).sources);
        }
        let mut aggs: Vec<(Option<String>, Lin)> = Vec::new();
        for a in aggregates {
            column_names(&a.expr, &mut used);
            let mut l = self.expr_lin(&a.expr, &sc, &[]);
            l.sources.extend(key.sources.iter().cloned());
            l.derived = true;
            aggs.push((a.alias.as_ref().map(|i| self.fold(i)), l));
        }
        let names: Vec<String> = match values {
            sqlparser::ast::PivotValueSource::List(vs) => vs
                .iter()
                .map(|v| match &v.alias {
                    Some(a) => self.fold(a),
                    None => self.pivot_value_name(&v.expr),
                })
                .collect(),
            _ => Vec::new(),
        };
        let (mut cols, stars) = self.passthrough(&inner, &used);
        for v in &names {
            for (a, l) in &aggs {
                let name = match a {
                    Some(a) if aggs.len() > 1 => format!("{v}_{a}"),
                    _ => v.clone(),
                };
                cols.push(OutCol { name, lin: l.clone() });
            }
        }
        let (a, acols) = self.alias_of(alias);
        let out = Output::new(cols, stars).renamed(&acols);
        Relation { alias: a, parts: Vec::new(), kind: RelKind::Derived(Rc::new(out)) }
    }

    fn pivot_value_name(&self, e: &Expr) -> String {
        match e {
            Expr::Value(v) => match &v.value {
                sqlparser::ast::Value::SingleQuotedString(s) | sqlparser::ast::Value::DoubleQuotedString(s) => {
                    s.clone()
                }
                other => other.to_string(),
            },
            Expr::Identifier(id) => self.fold(id),
            other => other.to_string(),
        }
    }

    /// `UNPIVOT (v FOR k IN (c1, c2))`: `k` holds column names (no source), `v` the values of
    /// `c1`, `c2` (like a UNION of them); the other columns pass through.
    fn unpivot(
        &mut self,
        table: &TableFactor,
        value: &Expr,
        name: &Ident,
        columns: &[sqlparser::ast::ExprWithAlias],
        alias: Option<&TableAlias>,
        outer: Option<&Scope>,
    ) -> Relation {
        let inner = self.reshaped_input(table, outer);
        let sc = Scope { rels: &inner, parent: outer, using: &[], aliases: &[] };
        let mut used = HashSet::new();
        let mut vlin = Lin::default();
        for c in columns {
            column_names(&c.expr, &mut used);
            let l = self.expr_lin(&c.expr, &sc, &[]);
            vlin.merge(&l);
        }
        let value_names: Vec<String> = match value {
            Expr::Identifier(id) => vec![self.fold(id)],
            Expr::Tuple(es) => es.iter().map(|e| self.item_name(e)).collect(),
            other => vec![self.item_name(other)],
        };
        let (mut cols, stars) = self.passthrough(&inner, &used);
        cols.push(OutCol { name: self.fold(name), lin: Lin { sources: BTreeSet::new(), derived: true } });
        for v in value_names {
            cols.push(OutCol { name: v, lin: vlin.clone() });
        }
        let (a, acols) = self.alias_of(alias);
        let out = Output::new(cols, stars).renamed(&acols);
        Relation { alias: a, parts: Vec::new(), kind: RelKind::Derived(Rc::new(out)) }
    }

    fn join_item<'q>(
        &mut self,
        twj: &'q TableWithJoins,
        rels: &mut Vec<Relation>,
        using: &mut Vec<String>,
        deferred: &mut Vec<&'q Expr>,
        outer: Option<&Scope>,
    ) {
        self.factor(&twj.relation, rels, using, deferred, outer);
        for j in &twj.joins {
            let before = rels.len();
            self.factor(&j.relation, rels, using, deferred, outer);
            let (c, extra) = join_constraint(&j.join_operator);
            if let Some(e) = extra {
                deferred.push(e);
            }
            match c {
                // The columns both sides have are joined on, and appear once in `*`.
                Some(JoinConstraint::Natural) => {
                    let (left, right) = rels.split_at(before.min(rels.len()));
                    let common: Vec<String> = right
                        .iter()
                        .flat_map(rel_columns)
                        .filter(|c| left.iter().any(|l| rel_columns(l).contains(c)))
                        .collect();
                    using.extend(common);
                }
                Some(JoinConstraint::On(e)) => deferred.push(e),
                Some(JoinConstraint::Using(names)) | Some(JoinConstraint::UsingAlias(names, _)) => {
                    for n in names {
                        if let Some(last) = idents(n).last() {
                            using.push(lower(&last.value));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn expand_rel(
        &mut self,
        rel: &Relation,
        opts: Option<&WildcardAdditionalOptions>,
        cols: &mut Vec<OutCol>,
        stars: &mut Vec<String>,
        scope: &Scope,
    ) {
        let mut except: Vec<String> = Vec::new();
        let mut replace: Vec<(String, &Expr)> = Vec::new();
        let mut rename: Vec<(String, String)> = Vec::new();
        if let Some(o) = opts {
            if let Some(ex) = &o.opt_except {
                except.push(lower(&ex.first_element.value));
                except.extend(ex.additional_elements.iter().map(|i| lower(&i.value)));
            }
            if let Some(ex) = &o.opt_exclude {
                match ex {
                    sqlparser::ast::ExcludeSelectItem::Single(n) => {
                        except.extend(idents(n).last().map(|i| lower(&i.value)))
                    }
                    sqlparser::ast::ExcludeSelectItem::Multiple(ns) => {
                        for n in ns {
                            except.extend(idents(n).last().map(|i| lower(&i.value)));
                        }
                    }
                }
            }
            if let Some(r) = &o.opt_replace {
                for item in &r.items {
                    replace.push((lower(&item.column_name.value), &item.expr));
                }
            }
            if let Some(r) = &o.opt_rename {
                let list: Vec<&sqlparser::ast::IdentWithAlias> = match r {
                    sqlparser::ast::RenameSelectItem::Single(x) => vec![x],
                    sqlparser::ast::RenameSelectItem::Multiple(xs) => xs.iter().collect(),
                };
                for x in list {
                    rename.push((lower(&x.ident.value), self.fold(&x.alias)));
                }
            }
        }
        let pattern = opts.and_then(|o| o.opt_ilike.as_ref()).map(|i| i.pattern.clone());
        let mut push = |this: &mut Self, c: &OutCol| {
            let key = lower(&c.name);
            if except.contains(&key) || pattern.as_deref().is_some_and(|p| !ilike(p, &c.name)) {
                return;
            }
            let mut c = c.clone();
            if let Some((_, e)) = replace.iter().find(|(k, _)| *k == key) {
                c.lin = this.expr_lin(e, scope, &[]);
            }
            if let Some((_, n)) = rename.iter().find(|(k, _)| *k == key) {
                c.name = n.clone();
            }
            cols.push(c);
        };
        match &rel.kind {
            RelKind::Table { known: Some(o), .. } | RelKind::Derived(o) => {
                for c in &o.cols {
                    push(self, c);
                }
                stars.extend(o.star_tables.iter().cloned());
            }
            RelKind::Table { name, known: None } => {
                stars.push(name.clone());
                self.unresolved(format!("SELECT * over {name}: columns unknown"));
            }
            RelKind::Generated { lin, cols: gcols, value } => {
                for n in gcols.iter().chain(value.iter()) {
                    push(self, &OutCol { name: n.clone(), lin: lin.clone() });
                }
            }
        }
    }

    fn item_name(&self, e: &Expr) -> String {
        match e {
            Expr::Identifier(id) => self.fold(id),
            Expr::CompoundIdentifier(ids) => ids.last().map(|i| self.fold(i)).unwrap_or_default(),
            Expr::Nested(inner) => self.item_name(inner),
            Expr::Cast { expr, .. } if bare_ref(expr) && self.dialect != Dialect::Snowflake => self.item_name(expr),
            Expr::Function(f) if !self.dialect.folds_upper() => {
                f.name.0.last().and_then(|p| p.as_ident()).map(|i| i.value.to_lowercase()).unwrap_or_default()
            }
            other => other.to_string(),
        }
    }

    fn select(&mut self, s: &Select, outer: Option<&Scope>) -> Output {
        let mut rels: Vec<Relation> = Vec::new();
        let mut using: Vec<String> = Vec::new();
        let mut deferred: Vec<&Expr> = Vec::new();
        for twj in &s.from {
            self.join_item(twj, &mut rels, &mut using, &mut deferred, outer);
        }
        for lv in &s.lateral_views {
            let mut lin = {
                let sc = Scope { rels: &rels, parent: outer, using: &[], aliases: &[] };
                self.expr_lin(&lv.lateral_view, &sc, &[])
            };
            lin.derived = true;
            let alias = idents(&lv.lateral_view_name).last().map(|i| lower(&i.value));
            let cols = lv.lateral_col_alias.iter().map(|i| lower(&i.value)).collect();
            rels.push(Relation { alias, parts: Vec::new(), kind: RelKind::Generated { lin, cols, value: None } });
        }
        let scope = Scope { rels: &rels, parent: outer, using: &using, aliases: &[] };
        for e in &deferred {
            self.walk(e, &scope);
        }
        let mut cols: Vec<OutCol> = Vec::new();
        let mut stars: Vec<String> = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let sc = Scope { aliases: &cols, ..scope };
                    let lin = self.expr_lin(e, &sc, &s.named_window);
                    let name = self.item_name(e);
                    cols.push(OutCol { name, lin });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let sc = Scope { aliases: &cols, ..scope };
                    let lin = self.expr_lin(expr, &sc, &s.named_window);
                    cols.push(OutCol { name: self.fold(alias), lin });
                }
                SelectItem::ExprWithAliases { expr, aliases } => {
                    let sc = Scope { aliases: &cols, ..scope };
                    let lin = self.expr_lin(expr, &sc, &s.named_window);
                    for a in aliases {
                        cols.push(OutCol { name: self.fold(a), lin: lin.clone() });
                    }
                }
                SelectItem::Wildcard(opts) => {
                    for r in &rels {
                        let before = cols.len();
                        self.expand_rel(r, Some(opts), &mut cols, &mut stars, &scope);
                        // A `JOIN ... USING (c)` column appears once, from the left.
                        if !using.is_empty() && before > 0 {
                            let (earlier, new) = cols.split_at(before);
                            let dup: Vec<bool> = new
                                .iter()
                                .map(|c| {
                                    let k = lower(&c.name);
                                    using.contains(&k) && earlier.iter().any(|e| lower(&e.name) == k)
                                })
                                .collect();
                            let mut n = 0;
                            cols.retain(|_| {
                                n += 1;
                                n <= before || !dup.get(n - before - 1).copied().unwrap_or(false)
                            });
                        }
                    }
                }
                SelectItem::QualifiedWildcard(kind, opts) => match kind {
                    SelectItemQualifiedWildcardKind::ObjectName(n) => {
                        let qual: Vec<String> = idents(n).iter().map(|i| lower(&i.value)).collect();
                        if let Some(r) = rels.iter().find(|r| r.matches(&qual)) {
                            self.expand_rel(r, Some(opts), &mut cols, &mut stars, &scope);
                        } else {
                            self.unresolved(format!("{n}.* matches no relation"));
                        }
                    }
                    SelectItemQualifiedWildcardKind::Expr(e) => {
                        let lin = self.expr_lin(e, &scope, &[]);
                        cols.push(OutCol { name: e.to_string(), lin: Lin { derived: true, ..lin } });
                    }
                },
            }
        }
        if let Some(e) = &s.selection {
            self.walk(e, &scope);
        }
        if let Some(e) = &s.having {
            self.walk(e, &scope);
        }
        if let Some(e) = &s.qualify {
            self.walk(e, &scope);
        }
        if let Some(e) = &s.prewhere {
            self.walk(e, &scope);
        }
        if let GroupByExpr::Expressions(es, _) = &s.group_by {
            for e in es {
                self.walk(e, &scope);
            }
        }
        Output::new(cols, stars)
    }

    // ---- statements ----

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
            Statement::CreateProcedure { .. } | Statement::CreateFunction(_) => op("CREATE_PROCEDURE"),
            // Spark `CACHE TABLE c AS SELECT ...`: a temporary view of the session.
            Statement::Cache { table_name, query: Some(q), .. } => {
                let target = self.qualify(table_name);
                let out = self.query(q, None);
                let cols: Vec<(String, Lin)> = out.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect();
                let intermediate = self.create(&target, &cols, true, true);
                self.keep_stars(&target, &out.star_tables);
                StmtResult {
                    operation: "VIEW".into(),
                    columns: self.columns_out(&target, &cols),
                    targets: vec![target],
                    intermediate,
                    ..StmtResult::default()
                }
            }
            _ => op(word),
        }
    }

    /// `ALTER TABLE a RENAME TO b`, `RENAME TABLE a TO b`: `b` now holds what `a` held, so `a`
    /// is its source and, when `a`'s columns are known, each column its namesake's. A 1-part new
    /// name stays in the old name's schema (Postgres, Snowflake, Oracle), whatever the defaults.
    fn rename(&mut self, old: &ObjectName, new: &ObjectName, r: &mut StmtResult) {
        let from = self.qualify(old);
        let new_parts = name_parts(new, self.dialect);
        let to = match (new_parts.as_slice(), from.rsplit_once('.')) {
            ([one], Some((prefix, _))) if !is_local_temp(one) => format!("{prefix}.{one}"),
            _ => self.qualify(new),
        };
        let moved = self.session.remove(&lower(&from));
        let cols: Vec<(String, Lin)> = match &moved {
            Some(e) => e
                .out
                .cols
                .iter()
                .map(|c| {
                    (c.name.clone(), if e.kind == EntryKind::Table { Lin::bare(&from, &c.name) } else { c.lin.clone() })
                })
                .collect(),
            None => self
                .catalog_output(&from)
                .map(|o| o.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect())
                .unwrap_or_default(),
        };
        match &moved {
            Some(e) if e.kind == EntryKind::Intermediate => self.tables.extend(e.sources.iter().cloned()),
            _ => {
                self.tables.insert(from.clone());
            }
        }
        if let Some(e) = moved {
            let kind = e.kind;
            let out_cols = cols
                .iter()
                .map(|(n, l)| OutCol {
                    name: n.clone(),
                    lin: if kind == EntryKind::Table { Lin::bare(&to, n) } else { l.clone() },
                })
                .collect();
            self.session.insert(
                lower(&to),
                Entry { kind, out: Rc::new(Output::new(out_cols, Vec::new())), sources: e.sources },
            );
        }
        r.columns.extend(self.columns_out(&to, &cols));
        r.targets.push(to);
    }

    /// Snowflake `ALTER TABLE a SWAP WITH b`: `a` now holds what `b` held (and `b` what `a` held).
    /// Reported like a rename of `b` to `a`: target `a`, source `b`, each column of `a` from its
    /// namesake in `b` when `b`'s columns are known; the tables of the call trade places too.
    fn swap(&mut self, a: &ObjectName, b: &ObjectName, r: &mut StmtResult) {
        let (a, b) = (self.qualify(a), self.qualify(b));
        let ea = self.session.remove(&lower(&a));
        let eb = self.session.remove(&lower(&b));
        let cols: Vec<(String, Lin)> = match &eb {
            Some(e) => e
                .out
                .cols
                .iter()
                .map(|c| {
                    (c.name.clone(), if e.kind == EntryKind::Table { Lin::bare(&b, &c.name) } else { c.lin.clone() })
                })
                .collect(),
            None => self
                .catalog_output(&b)
                .map(|o| o.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect())
                .unwrap_or_default(),
        };
        match &eb {
            Some(e) if e.kind == EntryKind::Intermediate => self.tables.extend(e.sources.iter().cloned()),
            _ => {
                self.tables.insert(b.clone());
            }
        }
        for (e, to) in [(eb, &a), (ea, &b)] {
            let Some(e) = e else { continue };
            let out_cols = e
                .out
                .cols
                .iter()
                .map(|c| OutCol {
                    name: c.name.clone(),
                    lin: if e.kind == EntryKind::Table { Lin::bare(to, &c.name) } else { c.lin.clone() },
                })
                .collect();
            self.session.insert(
                lower(to),
                Entry { kind: e.kind, out: Rc::new(Output::new(out_cols, Vec::new())), sources: e.sources },
            );
        }
        r.columns.extend(self.columns_out(&a, &cols));
        r.targets.push(a);
    }

    /// T-SQL `OUTPUT ... INTO t [(cols)]` of an INSERT, UPDATE, DELETE or MERGE: `t` is one more
    /// target. `inserted.c` is what the statement wrote to `c` of the `changed` table (that table's
    /// own `c` when it did not write it), `deleted.c` the `changed` table's `c` as it was; other
    /// references resolve among the statement's relations (a MERGE source, an UPDATE's FROM).
    fn output_into(
        &mut self,
        output: Option<&OutputClause>,
        changed: &str,
        written: &[(String, Lin)],
        mut rels: Vec<Relation>,
        using: &[String],
        r: &mut StmtResult,
    ) {
        let Some(OutputClause::Output { select_items, into_table: Some(into), .. }) = output else { return };
        let Some(first) = into.targets.first() else { return };
        let (ids, listed): (Vec<Ident>, Vec<String>) = match first {
            Expr::Identifier(id) => (vec![id.clone()], Vec::new()),
            Expr::CompoundIdentifier(ids) => (ids.clone(), Vec::new()),
            // `INTO audit (a, b)` parses as a call.
            Expr::Function(f) => {
                let ids = f.name.0.iter().filter_map(|p| p.as_ident().cloned()).collect();
                let listed = match &f.args {
                    FunctionArguments::List(l) => l
                        .args
                        .iter()
                        .filter_map(|a| match a {
                            FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(i))) => Some(self.fold(i)),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                (ids, listed)
            }
            _ => return,
        };
        if ids.is_empty() {
            return;
        }
        let name = ObjectName(ids.into_iter().map(ObjectNamePart::Identifier).collect());
        let target = self.qualify(&name);
        let known = self.target_columns(changed);
        let stars = if known.is_some() { Vec::new() } else { vec![changed.to_string()] };
        let mut ins: Vec<OutCol> = Vec::new();
        let mut del: Vec<OutCol> = Vec::new();
        for n in known.iter().flatten() {
            let lin = written.iter().find(|(w, _)| lower(w) == lower(n)).map(|(_, l)| l.clone());
            ins.push(OutCol { name: n.clone(), lin: lin.unwrap_or_else(|| Lin::bare(changed, n)) });
            del.push(OutCol { name: n.clone(), lin: Lin::bare(changed, n) });
        }
        for (w, l) in written {
            if !ins.iter().any(|c| lower(&c.name) == lower(w)) {
                ins.push(OutCol { name: w.clone(), lin: l.clone() });
            }
        }
        let pseudo = |alias: &str, cols: Vec<OutCol>| Relation {
            alias: Some(alias.to_string()),
            parts: Vec::new(),
            kind: RelKind::Derived(Rc::new(Output::new(cols, stars.clone()))),
        };
        rels.push(pseudo("inserted", ins));
        rels.push(pseudo("deleted", del));
        let scope = Scope { rels: &rels, parent: None, using, aliases: &[] };
        let mut cols: Vec<OutCol> = Vec::new();
        let mut star_tables = Vec::new();
        for item in select_items {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let lin = self.expr_lin(e, &scope, &[]);
                    cols.push(OutCol { name: self.item_name(e), lin });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let lin = self.expr_lin(expr, &scope, &[]);
                    cols.push(OutCol { name: self.fold(alias), lin });
                }
                SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), opts) => {
                    let qual: Vec<String> = idents(n).iter().map(|i| lower(&i.value)).collect();
                    if let Some(rel) = rels.iter().find(|x| x.matches(&qual)) {
                        self.expand_rel(rel, Some(opts), &mut cols, &mut star_tables, &scope);
                    }
                }
                _ => {}
            }
        }
        if !star_tables.is_empty() {
            self.unresolved(format!("OUTPUT ... * over {changed}: columns unknown"));
        }
        let names: Vec<String> = if !listed.is_empty() {
            listed
        } else if let Some(names) = self.target_columns(&target) {
            names
        } else {
            cols.iter().map(|c| c.name.clone()).collect()
        };
        let pairs: Vec<(String, Lin)> = names
            .iter()
            .zip(cols.iter())
            .filter(|(n, _)| !n.starts_with('$'))
            .map(|(n, c)| (n.clone(), c.lin.clone()))
            .collect();
        // An `OUTPUT INTO @ids` table variable collapses into later statements like any
        // intermediate table; it does not make the statement itself intermediate.
        if !self.write(&target, &pairs) {
            r.columns.extend(self.columns_out(&target, &pairs));
            r.targets.push(target);
        }
    }

    /// Records the columns written to `target`, and returns them as [`ColumnLineage`].
    fn columns_out(&self, target: &str, cols: &[(String, Lin)]) -> Vec<ColumnLineage> {
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
    fn create(&mut self, target: &str, cols: &[(String, Lin)], temp: bool, view: bool) -> bool {
        let key = lower(target);
        let kind = if temp || self.intermediate.contains(&key) {
            EntryKind::Intermediate
        } else if view {
            EntryKind::View
        } else {
            EntryKind::Table
        };
        let out_cols = cols
            .iter()
            .map(|(n, l)| OutCol {
                name: n.clone(),
                lin: if kind == EntryKind::Table { Lin::bare(target, n) } else { l.clone() },
            })
            .collect();
        let sources = self.tables.iter().filter(|t| lower(t) != key).cloned().collect();
        self.session.insert(key, Entry { kind, out: Rc::new(Output::new(out_cols, Vec::new())), sources });
        kind == EntryKind::Intermediate
    }

    /// A view or intermediate table made with `SELECT *` over a table of unknown columns: a later
    /// reference to any of its columns is that table's column.
    fn keep_stars(&mut self, target: &str, stars: &[String]) {
        if stars.is_empty() {
            return;
        }
        if let Some(e) = self.session.get_mut(&lower(target)).filter(|e| e.kind != EntryKind::Table) {
            e.out = Rc::new(Output::new(e.out.cols.clone(), stars.to_vec()));
        }
    }

    /// Merges what a write (INSERT, MERGE, UPDATE) adds to a table created earlier in the call.
    /// Returns whether the target is intermediate.
    fn write(&mut self, target: &str, cols: &[(String, Lin)]) -> bool {
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
            let lin = if e.kind == EntryKind::Table { Lin::bare(target, n) } else { l.clone() };
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

    fn pairs(names: &[String], out: &Output) -> Vec<(String, Lin)> {
        names.iter().zip(out.cols.iter()).map(|(n, c)| (n.clone(), c.lin.clone())).collect()
    }

    fn query_statement(&mut self, q: &Query) -> StmtResult {
        if let SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) | SetExpr::Merge(s) = &*q.body {
            // `WITH ... INSERT/UPDATE/DELETE/MERGE`: the CTEs are visible to the statement.
            let mark = self.ctes.len();
            if let Some(with) = &q.with {
                for cte in &with.cte_tables {
                    let names: Vec<String> = cte.alias.columns.iter().map(|c| self.fold(&c.name)).collect();
                    let out = match &*cte.query.body {
                        SetExpr::Delete(st) | SetExpr::Update(st) => self.returning(st, None),
                        // `WITH x AS (INSERT ... RETURNING ...)` writes its table too (reported as
                        // one more target) and hands on what it returns. (An UPDATE or DELETE
                        // there is a source of the statement, which a target could not be.)
                        SetExpr::Insert(st) => match st {
                            Statement::Insert(i) => {
                                let w = self.insert(i);
                                let out = self.insert_returning(i, &w);
                                self.cte_writes.push(w);
                                out
                            }
                            _ => Output::default(),
                        },
                        _ => self.query(&cte.query, None),
                    }
                    .renamed(&names);
                    self.ctes.push((lower(&cte.alias.name.value), Rc::new(out)));
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
        let cols: Vec<(String, Lin)> = out.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect();
        let intermediate = self.create(&target, &cols, temp, false);
        self.keep_stars(&target, &out.star_tables);
        StmtResult {
            operation: "CTAS".into(),
            columns: self.columns_out(&target, &cols),
            targets: vec![target],
            intermediate,
            ..StmtResult::default()
        }
    }

    fn insert(&mut self, ins: &Insert) -> StmtResult {
        let operation = if ins.overwrite { "INSERT_OVERWRITE" } else { "INSERT_INTO" }.to_string();
        let out = match &ins.source {
            Some(q) => self.query(q, None),
            None => Output::default(),
        };
        if !ins.multi_table_into_clauses.is_empty() || !ins.multi_table_when_clauses.is_empty() {
            return self.multi_insert(ins, &out, operation);
        }
        let TableObject::TableName(name) = &ins.table else {
            return StmtResult { operation, ..StmtResult::default() };
        };
        let target = self.qualify(name);
        let mut cols: Vec<(String, Lin)> = if ins.by_name {
            // `BY NAME`: each column goes to the target's column of the same name.
            let known = self.target_columns(&target).map(|n| n.iter().map(|c| lower(c)).collect::<HashSet<_>>());
            out.cols
                .iter()
                .filter(|c| known.as_ref().is_none_or(|k| k.contains(&lower(&c.name))))
                .map(|c| (c.name.clone(), c.lin.clone()))
                .collect()
        } else if !ins.columns.is_empty() {
            let names: Vec<String> =
                ins.columns.iter().filter_map(|c| idents(c).last().map(|i| self.fold(i))).collect();
            Self::pairs(&names, &out)
        } else if let Some(names) = self.target_columns(&target) {
            Self::pairs(&names, &out)
        } else if out.star_tables.is_empty() {
            // By the select list's names; an unnamed expression (`a + 1`) names no column.
            let named =
                |n: &str| !n.starts_with("column") && n.chars().all(|c| c.is_alphanumeric() || "_$#@".contains(c));
            out.cols.iter().filter(|c| named(&c.name)).map(|c| (c.name.clone(), c.lin.clone())).collect()
        } else {
            Vec::new()
        };
        let upsert: &[sqlparser::ast::Assignment] = match &ins.on {
            Some(sqlparser::ast::OnInsert::DuplicateKeyUpdate(a)) => a,
            Some(sqlparser::ast::OnInsert::OnConflict(sqlparser::ast::OnConflict {
                action: sqlparser::ast::OnConflictAction::DoUpdate(u),
                ..
            })) => &u.assignments,
            _ => &[],
        };
        if !upsert.is_empty() {
            // `ON CONFLICT DO UPDATE` / `ON DUPLICATE KEY UPDATE`: `EXCLUDED.c`, MySQL `VALUES(c)`
            // and an unqualified `c` are the row being inserted; the target's own columns are no
            // sources of themselves. A column the insert wrote gains the update's sources.
            let excluded: Vec<OutCol> = cols.iter().map(|(n, l)| OutCol { name: n.clone(), lin: l.clone() }).collect();
            // MySQL's row alias, `VALUES (...) AS new ON DUPLICATE KEY UPDATE b = new.b`.
            let row_alias = ins
                .insert_alias
                .as_ref()
                .and_then(|a| idents(&a.row_alias).last().map(|i| lower(&i.value)))
                .unwrap_or_else(|| "excluded".into());
            let rels = [
                Relation {
                    alias: Some(row_alias),
                    parts: Vec::new(),
                    kind: RelKind::Derived(Rc::new(Output::new(excluded, Vec::new()))),
                },
                Relation {
                    alias: ins.table_alias.as_ref().map(|a| lower(&a.alias.value)),
                    parts: name_parts(name, self.dialect).iter().map(|p| lower(p)).collect(),
                    kind: RelKind::Table { name: target.clone(), known: None },
                },
            ];
            let scope = Scope { rels: &rels, ..EMPTY_SCOPE };
            for a in upsert {
                let AssignmentTarget::ColumnName(n) = &a.target else { continue };
                let Some(col) = idents(n).last().map(|i| self.fold(i)) else { continue };
                let l = self.expr_lin(&a.value, &scope, &[]);
                match cols.iter_mut().find(|(c, _)| lower(c) == lower(&col)) {
                    // The row keeps what the insert wrote; the table's own columns add nothing.
                    Some((_, existing)) => {
                        let tl = lower(&target);
                        let own = Lin {
                            sources: l.sources.iter().filter(|(t, _)| lower(t) != tl).cloned().collect(),
                            derived: l.derived,
                        };
                        existing.merge(&own);
                    }
                    None => cols.push((col, l)),
                }
            }
        }
        if !ins.assignments.is_empty() {
            let scope = EMPTY_SCOPE;
            for a in &ins.assignments {
                if let AssignmentTarget::ColumnName(n) = &a.target {
                    if let Some(i) = idents(n).last() {
                        let mut l = self.expr_lin(&a.value, &scope, &[]);
                        l.derived = true;
                        cols.push((self.fold(i), l));
                    }
                }
            }
        }
        let intermediate = self.write(&target, &cols);
        let mut r = StmtResult {
            operation,
            columns: self.columns_out(&target, &cols),
            targets: vec![target.clone()],
            intermediate,
            ..StmtResult::default()
        };
        self.output_into(ins.output.as_ref(), &target, &cols, Vec::new(), &[], &mut r);
        r
    }

    /// Snowflake / Oracle `INSERT ALL|FIRST [WHEN ...] INTO t [(cols)] [VALUES (...)] ... SELECT`.
    fn multi_insert(&mut self, ins: &Insert, out: &Output, operation: String) -> StmtResult {
        let mut r = StmtResult { operation, ..StmtResult::default() };
        let mut clauses: Vec<&sqlparser::ast::MultiTableInsertIntoClause> =
            ins.multi_table_into_clauses.iter().collect();
        for w in &ins.multi_table_when_clauses {
            clauses.extend(w.into_clauses.iter());
        }
        if let Some(e) = &ins.multi_table_else_clause {
            clauses.extend(e.iter());
        }
        // The VALUES of each clause refer to the source query's columns by name.
        let rel = Relation {
            alias: None,
            parts: Vec::new(),
            kind: RelKind::Derived(Rc::new(Output::new(out.cols.clone(), out.star_tables.clone()))),
        };
        let rels = [rel];
        let scope = Scope { rels: &rels, ..EMPTY_SCOPE };
        let mut per_target: Vec<(String, Vec<(String, Lin)>)> = Vec::new();
        for c in clauses {
            let target = self.qualify(&c.table_name);
            let names: Vec<String> = if !c.columns.is_empty() {
                c.columns.iter().map(|i| self.fold(i)).collect()
            } else {
                self.target_columns(&target).unwrap_or_else(|| out.cols.iter().map(|c| c.name.clone()).collect())
            };
            let cols: Vec<(String, Lin)> = match &c.values {
                Some(v) => names
                    .iter()
                    .zip(v.values.iter())
                    .filter_map(|(n, val)| match val {
                        sqlparser::ast::MultiTableInsertValue::Expr(e) => {
                            Some((n.clone(), self.expr_lin(e, &scope, &[])))
                        }
                        _ => None,
                    })
                    .collect(),
                None => Self::pairs(&names, out),
            };
            match per_target.iter_mut().find(|(t, _)| *t == target) {
                Some((_, v)) => v.extend(cols),
                None => per_target.push((target, cols)),
            }
        }
        for (t, cols) in per_target {
            r.intermediate |= self.write(&t, &cols);
            r.columns.extend(self.columns_out(&t, &cols));
            r.targets.push(t);
        }
        r
    }

    /// The one base table behind CTE `name` (T-SQL `WITH c AS (SELECT ... FROM t) DELETE FROM c`
    /// deletes from `t`); `None` when `name` is no CTE or reads several tables.
    fn cte_base(&self, name: &ObjectName) -> Option<String> {
        let parts = idents(name);
        if parts.len() != 1 {
            return None;
        }
        let key = lower(&parts.first()?.value);
        let (_, o) = self.ctes.iter().rev().find(|(k, _)| *k == key)?;
        let mut tables: BTreeSet<&String> = o.cols.iter().flat_map(|c| c.lin.sources.iter().map(|(t, _)| t)).collect();
        tables.extend(o.star_tables.iter());
        let mut it = tables.into_iter();
        match (it.next(), it.next()) {
            (Some(t), None) => Some(t.clone()),
            _ => None,
        }
    }

    /// The table behind alias `name` among `from`'s relations (T-SQL `UPDATE a ... FROM t a`).
    fn aliased_table(&self, name: &ObjectName, from: &[TableWithJoins]) -> Option<String> {
        let parts = idents(name);
        if parts.len() != 1 {
            return None;
        }
        let want = lower(&parts.first()?.value);
        for twj in from {
            for f in std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation)) {
                if let TableFactor::Table { name: tn, alias: Some(a), args: None, .. } = f {
                    if lower(&a.name.value) == want {
                        return Some(self.qualify(tn));
                    }
                }
            }
        }
        None
    }

    fn update(&mut self, u: &Update) -> StmtResult {
        let from: &[TableWithJoins] = match &u.from {
            Some(UpdateTableFromKind::BeforeSet(v)) | Some(UpdateTableFromKind::AfterSet(v)) => v,
            None => &[],
        };
        let mut rels = Vec::new();
        let mut using = Vec::new();
        let mut deferred = Vec::new();
        let target_name = match &u.table.relation {
            TableFactor::Table { name, .. } => Some(name),
            _ => None,
        };
        let aliased = target_name.and_then(|n| self.aliased_table(n, from));
        let default_target = match (&aliased, target_name) {
            (Some(t), _) => t.clone(),
            (None, Some(n)) => {
                let t = self.cte_base(n).unwrap_or_else(|| self.qualify(n));
                self.join_item(&u.table, &mut rels, &mut using, &mut deferred, None);
                t
            }
            (None, None) => return StmtResult { operation: "UPDATE".into(), ..StmtResult::default() },
        };
        for twj in from {
            self.join_item(twj, &mut rels, &mut using, &mut deferred, None);
        }
        let scope = Scope { rels: &rels, parent: None, using: &using, aliases: &[] };
        for e in &deferred {
            self.walk(e, &scope);
        }
        let mut per_target: Vec<(String, Vec<(String, Lin)>)> = Vec::new();
        let mut add = |t: String, c: String, l: Lin| match per_target.iter_mut().find(|(x, _)| *x == t) {
            Some((_, v)) => v.push((c, l)),
            None => per_target.push((t, vec![(c, l)])),
        };
        for a in &u.assignments {
            match &a.target {
                AssignmentTarget::ColumnName(n) => {
                    let ids = idents(n);
                    let Some(col) = ids.last() else { continue };
                    let mut target = default_target.clone();
                    if ids.len() >= 2 {
                        let qual: Vec<String> = ids.iter().take(ids.len() - 1).map(|i| lower(&i.value)).collect();
                        if let Some(RelKind::Table { name, .. }) =
                            rels.iter().find(|r| r.matches(&qual)).map(|r| &r.kind)
                        {
                            target = name.clone();
                        }
                    }
                    let l = self.expr_lin(&a.value, &scope, &[]);
                    add(target, self.fold(col), l);
                }
                AssignmentTarget::Tuple(names) => {
                    let lins: Vec<Lin> = match &a.value {
                        Expr::Tuple(es) => es.iter().map(|e| self.expr_lin(e, &scope, &[])).collect(),
                        // By position, like INSERT ... SELECT: a bare select item stays bare.
                        Expr::Subquery(q) => self.query(q, Some(&scope)).cols.into_iter().map(|c| c.lin).collect(),
                        other => {
                            let l = self.expr_lin(other, &scope, &[]);
                            names.iter().map(|_| Lin { derived: true, ..l.clone() }).collect()
                        }
                    };
                    for (n, l) in names.iter().zip(lins) {
                        if let Some(col) = idents(n).last() {
                            add(default_target.clone(), self.fold(col), l);
                        }
                    }
                }
            }
        }
        if let Some(e) = &u.selection {
            self.walk(e, &scope);
        }
        let mut r = StmtResult { operation: "UPDATE".into(), ..StmtResult::default() };
        if per_target.is_empty() {
            per_target.push((default_target.clone(), Vec::new()));
        }
        let written: Vec<(String, Lin)> =
            per_target.iter().filter(|(t, _)| *t == default_target).flat_map(|(_, c)| c.iter().cloned()).collect();
        for (t, cols) in per_target {
            r.intermediate |= self.write(&t, &cols);
            r.columns.extend(self.columns_out(&t, &cols));
            r.targets.push(t);
        }
        self.output_into(u.output.as_ref(), &default_target, &written, rels, &using, &mut r);
        r
    }

    fn delete(&mut self, d: &Delete) -> StmtResult {
        let from: &[TableWithJoins] = match &d.from {
            FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
        };
        let target = if let Some(n) = d.tables.first() {
            self.aliased_table(n, from).or_else(|| self.cte_base(n)).unwrap_or_else(|| self.qualify(n))
        } else {
            match from.first().map(|t| &t.relation) {
                Some(TableFactor::Table { name, .. }) => self.cte_base(name).unwrap_or_else(|| self.qualify(name)),
                _ => return StmtResult { operation: "DELETE".into(), ..StmtResult::default() },
            }
        };
        let mut rels = Vec::new();
        let mut using = Vec::new();
        let mut deferred = Vec::new();
        for twj in from.iter().chain(d.using.iter().flatten()) {
            self.join_item(twj, &mut rels, &mut using, &mut deferred, None);
        }
        let scope = Scope { rels: &rels, parent: None, using: &using, aliases: &[] };
        for e in deferred.iter().copied().chain(d.selection.iter()) {
            self.walk(e, &scope);
        }
        let intermediate = self.session.get(&lower(&target)).is_some_and(|e| e.kind == EntryKind::Intermediate);
        let mut r = StmtResult {
            operation: "DELETE".into(),
            targets: vec![target.clone()],
            intermediate,
            ..StmtResult::default()
        };
        self.output_into(d.output.as_ref(), &target, &[], rels, &using, &mut r);
        r
    }

    fn merge(&mut self, m: &Merge) -> StmtResult {
        let TableFactor::Table { name, .. } = &m.table else {
            return StmtResult { operation: "MERGE_INTO".into(), ..StmtResult::default() };
        };
        let target = self.qualify(name);
        let mut rels = Vec::new();
        let mut using = Vec::new();
        let mut deferred = Vec::new();
        self.factor(&m.table, &mut rels, &mut using, &mut deferred, None);
        self.factor(&m.source, &mut rels, &mut using, &mut deferred, None);
        let scope = Scope { rels: &rels, parent: None, using: &using, aliases: &[] };
        self.walk(&m.on, &scope);
        let mut cols: Vec<(String, Lin)> = Vec::new();
        let source_out: Option<Rc<Output>> = match rels.get(1).map(|r| &r.kind) {
            Some(RelKind::Derived(o)) | Some(RelKind::Table { known: Some(o), .. }) => Some(o.clone()),
            _ => None,
        };
        let by_name = |this: &mut Self, cols: &mut Vec<(String, Lin)>| match &source_out {
            Some(o) => cols.extend(o.cols.iter().map(|c| (c.name.clone(), c.lin.clone()))),
            None => this.unresolved("MERGE ... * over a source of unknown columns".to_string()),
        };
        for clause in &m.clauses {
            if let Some(p) = &clause.predicate {
                self.walk(p, &scope);
            }
            match &clause.action {
                MergeAction::Insert(ins) => {
                    let names: Vec<String> = if !ins.columns.is_empty() {
                        ins.columns.iter().filter_map(|c| idents(c).last().map(|i| self.fold(i))).collect()
                    } else {
                        self.target_columns(&target).unwrap_or_default()
                    };
                    match &ins.kind {
                        MergeInsertKind::Values(v) => {
                            // A row that did not match has no target columns to read.
                            let source_scope = Scope { rels: rels.get(1..).unwrap_or(&[]), ..scope };
                            if let Some(row) = v.rows.first() {
                                for (n, e) in names.iter().zip(row.iter()) {
                                    let l = self.expr_lin(e, &source_scope, &[]);
                                    cols.push((n.clone(), l));
                                }
                            }
                        }
                        _ => by_name(self, &mut cols),
                    }
                }
                MergeAction::Update(upd) => match &upd.kind {
                    MergeUpdateKind::Set(assignments) => {
                        for a in assignments {
                            if let AssignmentTarget::ColumnName(n) = &a.target {
                                if let Some(col) = idents(n).last() {
                                    let l = self.expr_lin(&a.value, &scope, &[]);
                                    cols.push((self.fold(col), l));
                                }
                            }
                        }
                    }
                    MergeUpdateKind::Wildcard => by_name(self, &mut cols),
                },
                _ => {}
            }
        }
        let intermediate = self.write(&target, &cols);
        let mut r = StmtResult {
            operation: "MERGE_INTO".into(),
            columns: self.columns_out(&target, &cols),
            targets: vec![target.clone()],
            intermediate,
            ..StmtResult::default()
        };
        self.output_into(m.output.as_ref(), &target, &cols, rels, &using, &mut r);
        r
    }

    fn create_table(&mut self, ct: &CreateTable) -> StmtResult {
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
            let cols: Vec<(String, Lin)> = if col_names.is_empty() {
                out.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect()
            } else {
                Self::pairs(&col_names, &out)
            };
            let intermediate = self.create(&target, &cols, temp, false);
            self.keep_stars(&target, &out.star_tables);
            return StmtResult {
                operation: "CTAS".into(),
                columns: self.columns_out(&target, &cols),
                targets: vec![target],
                external_location: location,
                intermediate,
                ..StmtResult::default()
            };
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
                cols = o.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect();
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

    fn create_view(&mut self, cv: &CreateView) -> StmtResult {
        let target = self.qualify(&cv.name);
        let out = self.query(&cv.query, None);
        let names: Vec<String> = cv.columns.iter().map(|c| self.fold(&c.name)).collect();
        let cols: Vec<(String, Lin)> = if names.is_empty() {
            out.cols.iter().map(|c| (c.name.clone(), c.lin.clone())).collect()
        } else {
            Self::pairs(&names, &out)
        };
        let intermediate = self.create(&target, &cols, cv.temporary, true);
        self.keep_stars(&target, &out.star_tables);
        StmtResult {
            operation: "VIEW".into(),
            columns: self.columns_out(&target, &cols),
            targets: vec![target],
            intermediate,
            ..StmtResult::default()
        }
    }
}

/// The lower-cased column names of a relation, when known.
fn rel_columns(r: &Relation) -> Vec<String> {
    match &r.kind {
        RelKind::Table { known: Some(o), .. } | RelKind::Derived(o) => o.cols.iter().map(|c| lower(&c.name)).collect(),
        RelKind::Generated { cols, value, .. } => cols.iter().chain(value.iter()).map(|c| lower(c)).collect(),
        RelKind::Table { known: None, .. } => Vec::new(),
    }
}

/// SQL `LIKE`/`ILIKE` matching, case-insensitive: `%` any run, `_` one character.
fn ilike(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let s: Vec<char> = s.to_lowercase().chars().collect();
    // Greedy matching with one backtrack point per `%` (linear enough for column names).
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some('%') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(c) if *c == '_' || Some(c) == s.get(si) => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).is_some_and(|rest| rest.iter().all(|c| *c == '%'))
}

fn renamed_rc(o: Rc<Output>, names: &[String]) -> Rc<Output> {
    if names.is_empty() {
        return o;
    }
    let out = Output::new(o.cols.clone(), o.star_tables.clone()).renamed(names);
    Rc::new(out)
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
