//! PIVOT and UNPIVOT in a `FROM` clause: the relation each makes of its input (see the parent
//! module's rules). A pivoted value column reads the aggregate's columns and the `FOR` column; an
//! unpivoted value column copies the unpivoted columns; the other columns pass through.

use std::collections::{BTreeSet, HashSet};
use std::ops::ControlFlow;
use std::rc::Rc;

use sqlparser::ast::{Expr, Ident, TableAlias, TableFactor};

use super::{lower, Analyzer, Lin, OutCol, Output, RelKind, Relation, Scope};

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

impl Analyzer<'_> {
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

    /// The lineage of each of `exprs` (the columns a PIVOT or UNPIVOT consumes) over its input
    /// `inner`, in order; the column names they use are added to `used`.
    fn consumed<'e>(
        &mut self,
        exprs: impl IntoIterator<Item = &'e Expr>,
        inner: &[Relation],
        outer: Option<&Scope>,
        used: &mut HashSet<String>,
    ) -> Vec<Lin> {
        let sc = Scope { rels: inner, parent: outer, using: &[], aliases: &[] };
        exprs
            .into_iter()
            .map(|e| {
                column_names(e, used);
                self.expr_lin(e, &sc, &[])
            })
            .collect()
    }

    /// The relation a PIVOT or UNPIVOT makes of its columns, renamed by its alias's column list.
    fn reshaped(&self, cols: Vec<OutCol>, stars: Vec<String>, alias: Option<&TableAlias>) -> Relation {
        let (a, acols) = self.alias_of(alias);
        let out = Output::new(cols, stars).renamed(&acols);
        Relation { alias: a, parts: Vec::new(), kind: RelKind::Derived(Rc::new(out)) }
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
    pub(super) fn pivot(
        &mut self,
        table: &TableFactor,
        aggregates: &[sqlparser::ast::ExprWithAlias],
        value_column: &[Expr],
        values: &sqlparser::ast::PivotValueSource,
        alias: Option<&TableAlias>,
        outer: Option<&Scope>,
    ) -> Relation {
        let inner = self.reshaped_input(table, outer);
        let mut used = HashSet::new();
        let mut key = Lin { sources: BTreeSet::new(), derived: true };
        for l in self.consumed(value_column, &inner, outer, &mut used) {
            key.sources.extend(l.sources);
        }
        let lins = self.consumed(aggregates.iter().map(|a| &a.expr), &inner, outer, &mut used);
        let mut aggs: Vec<(Option<String>, Lin)> = Vec::new();
        for (a, mut l) in aggregates.iter().zip(lins) {
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
        self.reshaped(cols, stars, alias)
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
    pub(super) fn unpivot(
        &mut self,
        table: &TableFactor,
        value: &Expr,
        name: &Ident,
        columns: &[sqlparser::ast::ExprWithAlias],
        alias: Option<&TableAlias>,
        outer: Option<&Scope>,
    ) -> Relation {
        let inner = self.reshaped_input(table, outer);
        let mut used = HashSet::new();
        let mut vlin = Lin::default();
        for l in self.consumed(columns.iter().map(|c| &c.expr), &inner, outer, &mut used) {
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
        self.reshaped(cols, stars, alias)
    }
}
