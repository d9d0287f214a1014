//! Neo4j store (being written).
