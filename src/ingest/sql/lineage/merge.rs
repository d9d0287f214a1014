//! `MERGE`: the columns its `WHEN MATCHED THEN UPDATE` and `WHEN NOT MATCHED THEN INSERT` clauses
//! write, from the source and the target.

use std::rc::Rc;

use sqlparser::ast::{AssignmentTarget, Merge, MergeAction, MergeInsertKind, MergeUpdateKind, TableFactor};

use super::names::idents;
use super::{Analyzer, Lin, Output, RelKind, Scope, StmtResult};

impl Analyzer<'_> {
    pub(super) fn merge(&mut self, m: &Merge) -> StmtResult {
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
            Some(o) => cols.extend(o.named_pairs()),
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
}
