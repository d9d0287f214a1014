//! Tributary: a data-lineage service. See ARCHITECTURE.md for the map of this crate.

pub mod domain;
pub mod metrics;
pub mod store;
