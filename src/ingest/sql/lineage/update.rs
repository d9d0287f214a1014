//! `UPDATE` and `DELETE`: the changed table (through a T-SQL alias or a one-table CTE), the
//! columns an `UPDATE` writes (per target when a `SET` names another table's column), and the
//! tables their `FROM`/`USING` and filters read.

use std::collections::BTreeSet;

use sqlparser::ast::{
    AssignmentTarget, Delete, Expr, FromTable, ObjectName, TableFactor, TableWithJoins, Update, UpdateTableFromKind,
};

use super::names::idents;
use super::{lower, Analyzer, EntryKind, Lin, RelKind, Scope, StmtResult};

impl Analyzer<'_> {
    /// The one base table behind CTE `name` (T-SQL `WITH c AS (SELECT ... FROM t) DELETE FROM c`
    /// deletes from `t`); `None` when `name` is no CTE or reads several tables.
    fn cte_base(&self, name: &ObjectName) -> Option<String> {
        let parts = idents(name);
        if parts.len() != 1 {
            return None;
        }
        let key = lower(&parts.first()?.value);
        let (_, o, _) = self.ctes.iter().rev().find(|(k, _, _)| *k == key)?;
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

    pub(super) fn update(&mut self, u: &Update) -> StmtResult {
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

    pub(super) fn delete(&mut self, d: &Delete) -> StmtResult {
        let from: &[TableWithJoins] = match &d.from {
            FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
        };
        // MySQL `DELETE t1, t2 FROM t1 JOIN t2 ...` deletes from both; the first is the target the
        // rest of the statement (OUTPUT, intermediate tables) is about.
        let mut more_targets: Vec<String> = d
            .tables
            .iter()
            .skip(1)
            .map(|n| self.aliased_table(n, from).or_else(|| self.cte_base(n)).unwrap_or_else(|| self.qualify(n)))
            .collect();
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
        more_targets.retain(|t| !t.eq_ignore_ascii_case(&target));
        more_targets.dedup();
        let mut targets = vec![target.clone()];
        targets.extend(more_targets);
        let mut r = StmtResult { operation: "DELETE".into(), targets, intermediate, ..StmtResult::default() };
        self.output_into(d.output.as_ref(), &target, &[], rels, &using, &mut r);
        r
    }
}
