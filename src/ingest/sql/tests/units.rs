//! Unit tests: split_statements, unwrap_procedure, mask_literals, caps, no panics.

use super::super::*;

/// Ad-hoc inspection: `SQL_DEBUG='select ...' SQL_DIALECT=postgres cargo test --lib sql_debug -- --nocapture`.
#[test]
fn sql_debug() {
    let Ok(sql) = std::env::var("SQL_DEBUG") else { return };
    let d = Dialect::parse(&std::env::var("SQL_DIALECT").unwrap_or_else(|_| "postgres".into())).unwrap();
    let stmts: Vec<String> = split_statements(&sql, d).into_iter().map(|(_, s)| s).collect();
    eprintln!("split: {stmts:#?}");
    for r in analyze(&stmts, d, &Options::default(), &NoColumns) {
        eprintln!("{r:#?}");
    }
}
