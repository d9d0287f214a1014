// Parameters: none. A container's changes in position order (changes_after_of_container).
CREATE INDEX change_container_b IF NOT EXISTS
FOR (c:Change) ON (c.container_b, c.position)
