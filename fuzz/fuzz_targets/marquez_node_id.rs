//! The `nodeId` of Marquez's lineage routes: `NodeId::parse`, and the written form of what it
//! parsed. Must never panic (see `harness.rs`).

#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::marquez_node_id(data);
});
