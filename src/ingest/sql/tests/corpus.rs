//! The case corpus.
