// Parameters: $ends: [{kind: 'container' | 'field', id: int}]. The ends that have no node (a
// deleted container or field still has its node, so it is not missing).
UNWIND $ends AS end
WITH end
WHERE NOT (
  (end.kind = 'container' AND EXISTS { MATCH (:Container {id: end.id}) })
  OR (end.kind = 'field' AND EXISTS { MATCH (:Field {id: end.id}) })
)
RETURN end.kind AS kind, end.id AS id
