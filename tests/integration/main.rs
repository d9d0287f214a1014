//! The behaviour suite: every case runs against the embedded store and against a real Neo4j.

#![allow(clippy::unwrap_used)]

mod common;

mod catalog;
mod changes;
mod convergence;
mod corpus;
mod edges;
mod exports;
mod external;
mod graph;
mod health;
mod history;
mod ingest_statuses;
mod jobs;
mod jobs_asof;
mod late_registration;
mod live_edges;
mod marquez;
mod openlineage;
mod paths;
mod permissions;
mod plain;
mod producers;
mod qualified_names;
mod rest;
mod rough_edges;
mod search;
mod seed_examples;
mod sql;
mod sql_corpus;
