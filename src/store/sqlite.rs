//! Embedded store (being written).
