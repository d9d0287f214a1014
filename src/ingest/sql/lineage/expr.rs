//! Expressions: the lineage of a value. A [`Walker`] visits an expression; each column reference
//! in it is resolved through the scope chain ([`Analyzer::resolve`]: the query's own relations,
//! then select-list aliases, then the outer queries), and each subquery in it is analysed as a
//! query of its own. Date parts (`DATEADD(day, ...)`), lambda parameters, pseudo-columns and
//! variables are told apart from columns here.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    AccessExpr, BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, NamedWindowDefinition,
    NamedWindowExpr, Query, Visit, Visitor, WindowType,
};

use crate::ingest::sql::Dialect;

use super::{lower, Analyzer, Hit, Lin, RelKind, Relation, Scope};

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

/// The identifiers of a bare column reference (`a`, `t.a`, `(t.a)`), if `e` is one.
pub(super) fn bare_ref(e: &Expr) -> bool {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Nested(inner) => bare_ref(inner),
        _ => false,
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
                // `a || id AS id, id AS original`: the alias's own expression read a column `id`,
                // so one exists, and a later `id` reads it rather than the alias.
                let column_exists = maybe.len() == 1 && c.lin.sources.iter().any(|(_, col)| lower(col) == key);
                if !column_exists {
                    return Some(c.lin.clone());
                }
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
    pub(super) fn expr_lin(&mut self, e: &Expr, scope: &Scope, windows: &[NamedWindowDefinition]) -> Lin {
        let mut w = self.walker(scope, windows, true);
        let _ = e.visit(&mut w);
        let derived = if bare_ref(e) { w.last_derived.unwrap_or(false) } else { true };
        Lin { sources: w.lin.sources, derived }
    }

    /// Visits `e` only for the subqueries in it (filters: table sources, no column sources).
    pub(super) fn walk(&mut self, e: &Expr, scope: &Scope) {
        let mut w = self.walker(scope, &[], false);
        let _ = e.visit(&mut w);
    }

    pub(super) fn args_lin(&mut self, args: &[FunctionArg], scope: &Scope) -> Lin {
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
}
