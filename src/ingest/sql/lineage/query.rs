//! Queries: a query's output columns and their lineage. CTEs, set operations, `VALUES`, `SELECT`
//! (its select list, `*` with `EXCEPT`/`REPLACE`/`RENAME`/`ILIKE`, lateral aliases, filters), and
//! the relations of a `FROM` clause: tables (through the CTEs, the tables of the call and the
//! catalog), derived tables, table functions, `UNNEST`/`FLATTEN`, `LATERAL VIEW`s and joins.

use std::collections::BTreeSet;
use std::rc::Rc;

use sqlparser::ast::{
    Cte, Expr, GroupByExpr, Ident, JoinConstraint, JoinOperator, ObjectName, ObjectNamePart, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, SetOperator, TableAlias, TableFactor, TableWithJoins,
    WildcardAdditionalOptions, With,
};

use crate::ingest::sql::Dialect;

use super::expr::bare_ref;
use super::names::{idents, name_parts, qualify_parts};
use super::{lower, Analyzer, EntryKind, Lin, OutCol, Output, RelKind, Relation, Scope, EMPTY_SCOPE};

const FLATTEN_COLS: &[&str] = &["seq", "key", "path", "index", "value", "this"];

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

impl Analyzer<'_> {
    pub(super) fn query(&mut self, q: &Query, outer: Option<&Scope>) -> Output {
        let mark = self.ctes.len();
        if let Some(with) = &q.with {
            self.with_clause(with, outer);
        }
        let out = self.set_expr(&q.body, outer);
        self.ctes.truncate(mark);
        out
    }

    /// The CTEs of a query's `WITH`, into scope. (Apart from `query`, whose frame every nested
    /// subquery stacks.)
    #[inline(never)]
    fn with_clause(&mut self, with: &With, outer: Option<&Scope>) {
        for cte in &with.cte_tables {
            let key = lower(&cte.alias.name.value);
            let (out, read) = match &*cte.query.body {
                // `WITH moved AS (DELETE ... RETURNING ...)`: the rows come from that table (and
                // the statement runs whether or not it is read).
                SetExpr::Delete(st) | SetExpr::Update(st) => {
                    let names: Vec<String> = cte.alias.columns.iter().map(|c| self.fold(&c.name)).collect();
                    (self.returning(st, outer).renamed(&names), Vec::new())
                }
                _ => self.cte(cte, with.recursive, outer),
            };
            self.ctes.push((key, Rc::new(out), Rc::new(read)));
        }
    }

    /// A CTE's output, and the tables it reads, which are taken out of the statement's sources
    /// until something reads the CTE (a CTE nothing reads is no source). A CTE that reads itself
    /// (`WITH RECURSIVE`, or without the keyword where T-SQL, Oracle and Snowflake allow it, a
    /// `UNION` whose later branch reads the CTE) sees itself as the columns of its first branch,
    /// not as a table.
    #[inline(never)]
    pub(super) fn cte(&mut self, cte: &Cte, recursive: bool, outer: Option<&Scope>) -> (Output, Vec<String>) {
        let key = lower(&cte.alias.name.value);
        let names: Vec<String> = cte.alias.columns.iter().map(|c| self.fold(&c.name)).collect();
        let before = self.tables.clone();
        let anchor = match &*cte.query.body {
            SetExpr::SetOperation { left, .. } => Some(left),
            _ => None,
        };
        let implicit = matches!(self.dialect, Dialect::TSql | Dialect::Oracle | Dialect::Snowflake) && anchor.is_some();
        let self_ref = recursive || implicit;
        if self_ref {
            let placeholder_names = match anchor {
                Some(left) if names.is_empty() => {
                    self.quiet += 1;
                    let o = self.set_expr(left, outer);
                    self.quiet -= 1;
                    o.cols.into_iter().map(|c| c.name).collect()
                }
                _ => names.clone(),
            };
            let placeholder = placeholder_names.into_iter().map(|n| OutCol { name: n, lin: Lin::default() }).collect();
            self.ctes.push((key, Rc::new(Output::new(placeholder, Vec::new())), Rc::new(Vec::new())));
        }
        let out = self.query(&cte.query, outer).renamed(&names);
        if self_ref {
            self.ctes.pop();
        }
        let read: Vec<String> = self.tables.difference(&before).cloned().collect();
        for t in &read {
            self.tables.remove(t);
        }
        (out, read)
    }

    /// `SELECT a ... UNION SELECT b, c ...`: queries of different widths are not valid SQL.
    /// (Apart from `set_expr`, whose frame every nested subquery stacks.)
    #[inline(never)]
    fn check_set_operation(&mut self, op: &SetOperator, left: (&SetExpr, &Output), right: (&SetExpr, &Output)) {
        let known = |(e, o): (&SetExpr, &Output)| o.star_tables.is_empty() && matches!(e, SetExpr::Select(_));
        if known(left) && known(right) && left.1.cols.len() != right.1.cols.len() && self.quiet == 0 {
            self.errors.push(format!(
                "each {op} query must have the same number of columns: {} and {}",
                left.1.cols.len(),
                right.1.cols.len()
            ));
        }
    }

    fn set_expr(&mut self, se: &SetExpr, outer: Option<&Scope>) -> Output {
        match se {
            SetExpr::Select(s) => self.select(s, outer),
            SetExpr::Query(q) => self.query(q, outer),
            SetExpr::SetOperation { left, right, op, .. } => {
                let l = self.set_expr(left, outer);
                let r = self.set_expr(right, outer);
                self.check_set_operation(op, (left, &l), (right, &r));
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

    pub(super) fn alias_of(&self, alias: Option<&TableAlias>) -> (Option<String>, Vec<String>) {
        match alias {
            Some(a) => (Some(lower(&a.name.value)), a.columns.iter().map(|c| self.fold(&c.name)).collect()),
            None => (None, Vec::new()),
        }
    }

    pub(super) fn table_relation(&mut self, name: &ObjectName, alias: Option<&TableAlias>) -> Relation {
        let parts = name_parts(name, self.dialect);
        let lparts: Vec<String> = parts.iter().map(|p| lower(p)).collect();
        let (alias, alias_cols) = self.alias_of(alias);
        if lparts.len() == 1 {
            let key = lparts.first().map(String::as_str).unwrap_or("");
            if let Some((_, o, read)) = self.ctes.iter().rev().find(|(k, _, _)| k == key) {
                let o = o.clone();
                let read = read.clone();
                self.tables.extend(read.iter().cloned());
                return Relation { alias, parts: lparts, kind: RelKind::Derived(renamed_rc(o, &alias_cols)) };
            }
        }
        // Spark's query of files, ``parquet.`s3://b/p` ``: the path is read.
        if matches!(self.dialect, Dialect::SparkSql | Dialect::Hive) {
            let ids = idents(name);
            if let [format, path] = ids.as_slice() {
                let formats = ["parquet", "json", "csv", "orc", "avro", "text", "delta", "binaryfile"];
                if path.quote_style == Some('`') && formats.contains(&lower(&format.value).as_str()) {
                    let p = path.value.clone();
                    self.tables.insert(p.clone());
                    return Relation { alias, parts: lparts, kind: RelKind::Table { name: p, known: None } };
                }
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
    pub(super) fn factor<'q>(
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
                    let parts = name_parts(name, self.dialect);
                    let flatten = parts.last().is_some_and(|n| n.eq_ignore_ascii_case("flatten"));
                    // A function of a schema (`dbo.fn_orders(5)`) is user-defined: what it reads
                    // is not known, which the answer says rather than leave it out silently.
                    if parts.len() >= 2 && !flatten {
                        self.unresolved(format!("table function {name}: the tables it reads are not known"));
                    }
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

    pub(super) fn join_item<'q>(
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

    pub(super) fn expand_rel(
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

    pub(super) fn item_name(&self, e: &Expr) -> String {
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
