// Parameters: none. A container's changes in position order (changes_after_of_container).
CREATE INDEX change_container_a IF NOT EXISTS
FOR (c:Change) ON (c.container_a, c.position)
