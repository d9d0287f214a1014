//! The one rule for `TRIBUTARY_SKIP_NEO4J`, shared through `#[path]` by every test binary whose
//! Neo4j cases may be skipped: such a case runs when `NEO4J_URI` is set, is skipped on purpose
//! only when `TRIBUTARY_SKIP_NEO4J` is exactly `1`, and fails otherwise, so `=0`, `=yes` or an
//! empty value cannot turn the Neo4j cases off unnoticed. (`scripts/test` unsets the variable
//! and always has a Neo4j; the integration, fault and query-bound suites never skip at all.)
//! `tests/cli.rs` checks the rule and that no test reads the variable anywhere else.

#![allow(dead_code)]

/// The variable's name, written out here only.
pub const VAR: &str = "TRIBUTARY_SKIP_NEO4J";

/// Whether the variable's value (`None`: unset) asks to skip the Neo4j cases.
pub fn skips(value: Option<&str>) -> bool {
    value == Some("1")
}

/// `NEO4J_URI` when it is set and not empty; otherwise `None` when `TRIBUTARY_SKIP_NEO4J=1` says
/// to skip on purpose (and stderr says so), and a panic saying what to do when it does not.
pub fn neo4j_uri_or_skip() -> Option<String> {
    if let Some(uri) = std::env::var("NEO4J_URI").ok().filter(|u| !u.is_empty()) {
        return Some(uri);
    }
    let value = std::env::var(VAR).ok();
    assert!(
        skips(value.as_deref()),
        "NEO4J_URI is not set: start a Neo4j with `eval \"$(scripts/neo4j-start)\"` (or run `scripts/test`), \
         or set {VAR}=1 to skip the Neo4j cases on purpose{}",
        value.map(|v| format!(" ({VAR}={v:?} skips nothing: only 1 does)")).unwrap_or_default()
    );
    eprintln!("NEO4J_URI is unset and {VAR}=1: skipping a Neo4j case");
    None
}
