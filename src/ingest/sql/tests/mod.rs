//! Tests of SQL lineage: the data-driven corpus under `tests/fixtures/sql/` ([`corpus`]) and unit
//! tests of splitting, procedures, masking, caps and robustness ([`units`]), and sqllineage's own
//! suite under `tests/fixtures/sqllineage/` ([`sqllineage`]).

mod corpus;
mod peers;
mod sqllineage;
mod units;
