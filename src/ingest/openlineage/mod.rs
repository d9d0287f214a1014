//! OpenLineage, the pure half: request bodies in, validated [`Event`]s out.
//!
//! The HTTP endpoints (seed 000 "Send OpenLineage Events", seed 002's `/v1/openlineage/lineage`)
//! and the GraphQL `ingestOpenLineage` mutation all go through the same three steps, each a pure
//! function so the rules live in one place and can be fuzzed:
//!
//! 1. [`decode_body`]: size limit before and after gzip, with a bounded inflater (a gzip bomb
//!    never allocates past the limit). Errors are [`BodyError`]: 413 or 400.
//! 2. [`parse_body`] / [`parse_batch_body`]: a byte pre-scan (nesting, `\u0000`, unpaired
//!    surrogates; iterative, never recursive) and then `serde_json`. The whole body is refused
//!    (400/413) before any event is looked at. [`check_value`] applies the same limits to JSON
//!    that arrived another way (a GraphQL `JSON` argument).
//! 3. [`validate`]: one event at a time, into the model of [`model`]. Errors carry a JSON pointer
//!    into the event ([`ValidationIssue`]); the caller answers 422 for them. Malformed references
//!    inside facets are not errors: they are kept as [`Event::warnings`] so nothing is silently
//!    dropped and one bad column reference does not cost a whole run its lineage.
//!
//! [`event_fingerprint`] identifies an event independently of key order, so the same event sent
//! twice can be recognised.
//!
//! Nothing here derives serde traits: events are read from `serde_json::Value` by hand, which is
//! what lets validation be permissive about unknown content yet exact about where an error is.

mod body;
mod facets;
mod fingerprint;
mod issues;
mod job_facets;
pub mod model;
pub mod naming;
mod pointer;
mod validate;

#[cfg(test)]
mod tests;

pub use body::{check_value, decode_body, parse_batch_body, parse_body, BodyError, ParsedBody};
pub use fingerprint::event_fingerprint;
pub use issues::MAX_ISSUES;
pub use model::{
    derived, indirect_only, masking, ColumnEdge, Dataset, DatasetRef, Event, EventKind, InputField, JobFacets, JobRef,
    Lifecycle, LifecycleChange, Owner, ParentRef, RootRef, RunFacets, RunState, SchemaField, SourceCode, Tag,
    Transformation, TransformationKind, ValidationIssue,
};
pub use validate::validate;

/// The limits seed 000 sets on OpenLineage requests. `Default` gives the seed's numbers; tests
/// and benchmarks may lower them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest body accepted, both as sent and after gzip decompression (50 MiB). Over it: 413.
    pub max_body_bytes: usize,
    /// Most events in one JSON list (1,000). Over it: 413.
    pub max_events: usize,
    /// Deepest JSON nesting of arrays and objects; the top-level value is level 1 (100). Over
    /// it: 400.
    pub max_nesting: usize,
    /// Most dataset and field relationships one event may attempt (10,000), counted as
    /// [`Event::relationship_count`] does. Over it: the event is rejected (422).
    pub max_relationships: usize,
    /// How far after "now" an `eventTime` may be (five minutes). Later: the event is rejected.
    pub max_future: chrono::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 50 * 1024 * 1024,
            max_events: 1000,
            max_nesting: 100,
            max_relationships: 10_000,
            max_future: chrono::Duration::minutes(5),
        }
    }
}
