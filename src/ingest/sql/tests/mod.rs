//! Tests of SQL lineage: the data-driven corpus under `tests/fixtures/sql/` ([`corpus`]) and unit
//! tests of splitting, procedures, masking, caps and robustness ([`units`]).

mod corpus;
mod units;
