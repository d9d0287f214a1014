//! Ingest: turning what producers send into validated, plain-Rust descriptions of lineage.
//!
//! Everything under this module is pure: no I/O, no store, no clock (the caller passes "now").
//! That keeps it exhaustively testable and safe to fuzz, and it is the only place that knows the
//! wire formats: serde types and JSON shapes stop here (STYLE item 4), the rest of the crate sees
//! the model types each submodule exports.
//!
//! - [`openlineage`]: OpenLineage request bodies (gzip, JSON limits) and events (envelope
//!   validation, the facets Tributary applies, column lineage in every published shape).

pub mod openlineage;
pub mod sql;
