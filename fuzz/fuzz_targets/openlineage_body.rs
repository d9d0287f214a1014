//! The OpenLineage REST body path: `decode_body`, `parse_body` / `parse_batch_body`, then
//! `event_fingerprint` and `validate` on each event. Must never panic (see `harness.rs`).

#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::openlineage_body(data);
});
