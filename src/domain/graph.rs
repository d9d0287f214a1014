//! Graph traversal over batched neighbour reads (being written).
