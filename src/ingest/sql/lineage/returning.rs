//! The rows a data-changing statement hands on: `RETURNING` (read by a `WITH` that wraps the
//! statement) and T-SQL `OUTPUT ... INTO t`, which makes `t` one more target. Both read the
//! changed table's row as it was written, so they live together.

use std::rc::Rc;

use sqlparser::ast::{
    Expr, FromTable, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, Insert, ObjectName, ObjectNamePart,
    OutputClause, SelectItem, SelectItemQualifiedWildcardKind, Statement, TableObject, TableWithJoins,
    UpdateTableFromKind,
};

use super::names::{idents, name_parts};
use super::{lower, Analyzer, Lin, OutCol, Output, RelKind, Relation, Scope, StmtResult, EMPTY_SCOPE};

impl Analyzer<'_> {
    /// The rows a `DELETE`/`UPDATE ... RETURNING` hands on: its items over the table it changes
    /// (and the tables of its `FROM`/`USING`).
    pub(super) fn returning(&mut self, st: &Statement, outer: Option<&Scope>) -> Output {
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
    pub(super) fn insert_returning(&mut self, ins: &Insert, w: &StmtResult) -> Output {
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

    /// T-SQL `OUTPUT ... INTO t [(cols)]` of an INSERT, UPDATE, DELETE or MERGE: `t` is one more
    /// target. `inserted.c` is what the statement wrote to `c` of the `changed` table (that table's
    /// own `c` when it did not write it), `deleted.c` the `changed` table's `c` as it was; other
    /// references resolve among the statement's relations (a MERGE source, an UPDATE's FROM).
    pub(super) fn output_into(
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
}
