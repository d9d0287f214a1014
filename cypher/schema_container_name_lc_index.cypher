// Parameters: none.
// `name_lc` is the container's name lowercased by the service (Rust's Unicode `to_lowercase`),
// the key of `containers_by_names`.
CREATE INDEX container_name_lc IF NOT EXISTS
FOR (c:Container) ON (c.name_lc)
