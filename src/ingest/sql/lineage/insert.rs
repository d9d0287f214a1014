//! `INSERT`: the target's columns from the query by position, by name (`BY NAME`), from a column
//! list or the catalog; upserts (`ON CONFLICT DO UPDATE`, `ON DUPLICATE KEY UPDATE`); MySQL's
//! `INSERT ... SET`; and Snowflake/Oracle multi-table `INSERT ALL|FIRST`.

use std::collections::HashSet;
use std::rc::Rc;

use sqlparser::ast::{AssignmentTarget, Expr, Insert, Query, SelectItem, SetExpr, TableObject};

use super::names::{idents, name_parts};
use super::{lower, Analyzer, Lin, OutCol, Output, RelKind, Relation, Scope, StmtResult, EMPTY_SCOPE};

impl Analyzer<'_> {
    pub(super) fn insert(&mut self, ins: &Insert) -> StmtResult {
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
        } else if let Some(unnamed) =
            ins.source.as_deref().and_then(unnamed_items).filter(|u| u.len() == out.cols.len())
        {
            // By the select list's names; an expression without a name (`a + 1`, `max(a)`), or a
            // name already taken, by its position (`_col2`), so no two columns merge and none is
            // lost.
            let mut taken: Vec<(String, &Lin)> = Vec::new();
            let mut cols = Vec::with_capacity(out.cols.len());
            for (i, (c, unnamed)) in out.cols.iter().zip(unnamed).enumerate() {
                let key = lower(&c.name);
                let name = match taken.iter().find(|(k, _)| *k == key) {
                    _ if unnamed => format!("_col{}", i + 1),
                    // `SELECT a, A`: the same column twice writes nothing new.
                    Some((_, l)) if same_lineage(l, &c.lin) => continue,
                    Some(_) => format!("_col{}", i + 1),
                    None => {
                        taken.push((key, &c.lin));
                        c.name.clone()
                    }
                };
                cols.push((name, c.lin.clone()));
            }
            cols
        } else if out.star_tables.is_empty() {
            // `VALUES` rows and other bodies: by the names of the query's columns.
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
}

/// For each item of the select list that names the query's columns (the first `SELECT` of a set
/// operation): whether it is an expression without a name of its own, neither a column reference
/// (`a`, `t.a`, `CAST(a AS int)`) nor aliased. `None` when the list has a `*` or the query is no
/// `SELECT` (`VALUES`).
fn unnamed_items(q: &Query) -> Option<Vec<bool>> {
    fn first_select(se: &SetExpr) -> Option<&sqlparser::ast::Select> {
        match se {
            SetExpr::Select(s) => Some(s),
            SetExpr::Query(q) => first_select(&q.body),
            SetExpr::SetOperation { left, .. } => first_select(left),
            _ => None,
        }
    }
    fn named(e: &Expr) -> bool {
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
            Expr::Nested(inner) => named(inner),
            Expr::Cast { expr, .. } => super::expr::bare_ref(expr),
            _ => false,
        }
    }
    let s = first_select(&q.body)?;
    s.projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => Some(!named(e)),
            SelectItem::ExprWithAlias { .. } => Some(false),
            _ => None,
        })
        .collect()
}

/// The same sources (names compared case-insensitively) and the same `derived`.
fn same_lineage(a: &Lin, b: &Lin) -> bool {
    let key = |l: &Lin| l.sources.iter().map(|(t, c)| (lower(t), lower(c))).collect::<HashSet<_>>();
    a.derived == b.derived && key(a) == key(b)
}
