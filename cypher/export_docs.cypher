// Parameters: none. Every document, ordered by kind and key (as the embedded store exports).
MATCH (d:Doc)
RETURN d.kind AS kind, d.key AS key, d.value AS value
ORDER BY d.kind, d.key
