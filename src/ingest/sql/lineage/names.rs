//! Names: how a table name as written becomes the qualified, folded name lineage reports (the
//! rules of the parent module's "Names"), the defaults `USE` and `SET search_path` change, and
//! which tables of a call collapse as intermediate ones.

use std::collections::{HashMap, HashSet};

use sqlparser::ast::{Expr, Ident, ObjectName, ObjectNamePart, ObjectType, SetExpr, Statement, Use};

use crate::ingest::sql::{Dialect, Options};

/// Folds an identifier as the dialect folds unquoted names.
pub(super) fn fold(id: &Ident, dialect: Dialect) -> String {
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

pub(super) fn idents(name: &ObjectName) -> Vec<&Ident> {
    name.0
        .iter()
        .filter_map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(i),
            _ => None,
        })
        .collect()
}

/// Name parts, folded; a BigQuery back-quoted `a.b.c` counts as three parts.
pub(super) fn name_parts(name: &ObjectName, dialect: Dialect) -> Vec<String> {
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

pub(super) fn is_local_temp(first: &str) -> bool {
    first.starts_with('#') || first.starts_with('@')
}

pub(super) fn qualify_parts(parts: &[String], db: Option<&str>, schema: Option<&str>) -> String {
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
pub(super) fn apply_use(u: &Use, dialect: Dialect, db: &mut Option<String>, schema: &mut Option<String>) {
    let two_level = matches!(dialect, Dialect::MySql | Dialect::MariaDb | Dialect::Hive | Dialect::SparkSql);
    let parts = |n: &ObjectName| name_parts(n, dialect);
    // Databricks (Unity Catalog) names are `catalog.schema.table`, and a database is a schema:
    // `USE [DATABASE|SCHEMA] s` sets the schema, `USE CATALOG c` the catalog.
    let spark = dialect == Dialect::SparkSql;
    match u {
        Use::Database(n) | Use::Schema(n) | Use::Object(n) if spark => {
            let p = parts(n);
            if p.len() >= 2 {
                *db = p.get(p.len() - 2).cloned();
            }
            *schema = p.last().cloned();
        }
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
pub(super) fn apply_search_path(set: &sqlparser::ast::Set, dialect: Dialect, schema: &mut Option<String>) {
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

pub(super) fn select_into(body: &SetExpr) -> Option<&sqlparser::ast::SelectInto> {
    match body {
        SetExpr::Select(s) => s.into.as_ref(),
        SetExpr::SetOperation { left, .. } => select_into(left),
        SetExpr::Query(q) => select_into(&q.body),
        _ => None,
    }
}
