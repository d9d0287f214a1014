// Parameters: none. Also the index behind every lookup of an event by id.
CREATE CONSTRAINT event_id_unique IF NOT EXISTS
FOR (e:Event) REQUIRE e.id IS UNIQUE
