//! Tributary: a data-lineage service. See ARCHITECTURE.md for the map of this crate.

pub mod api;
pub mod auth;
pub mod config;
pub mod domain;
pub mod error;
pub mod forward;
pub mod ingest;
pub mod kafka;
pub mod lifecycle;
pub mod metrics;
pub mod server;
pub mod service;
pub mod store;
