// Parameters: $after (int), $first (int), $container_id (int). The first changes above position
// $after that touch the container (either of a change's two containers), in order; each arm
// walks its own (container, position) index.
CALL () {
  MATCH (c:Change)
  WHERE c.container_a = $container_id AND c.position > $after
  RETURN c
  UNION ALL
  MATCH (c:Change)
  WHERE c.container_b = $container_id AND c.position > $after
  RETURN c
}
RETURN c {.*} AS change
ORDER BY c.position
LIMIT $first
