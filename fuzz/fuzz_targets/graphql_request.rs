//! The GraphQL request path: a POST /graphql through the real router over an embedded store.
//! Must never panic, answer 5xx, or let hostile input reach an internal error (see `harness.rs`).

#![no_main]

use std::sync::OnceLock;

#[path = "../harness.rs"]
mod harness;

static HARNESS: OnceLock<harness::GraphqlHarness> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    HARNESS.get_or_init(harness::GraphqlHarness::new).request(data);
});
