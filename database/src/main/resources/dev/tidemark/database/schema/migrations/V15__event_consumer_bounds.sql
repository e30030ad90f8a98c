-- Events consumers are bounded (docs/events.md#bounds): each counts against its owner's quota and
-- its owner's role's quota, and one unused for events.consumer-idle-seconds is removed, with its
-- share group and dead-letter topic, by one node. owner_role and owner_name are the caller's when
-- the consumer was made; last_used_at moves when an events tool uses it (at most about once a
-- minute); remove_requested_at is set by `tidemark consumers delete`; removing_since and
-- removing_node are the claim of the node that removes it (a claim older than a few sweeps is
-- taken over, for a node that died half way).
ALTER TABLE tidemark.event_consumer
  ADD COLUMN owner_name text,
  ADD COLUMN owner_role text,
  ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN remove_requested_at timestamptz,
  ADD COLUMN removing_since timestamptz,
  ADD COLUMN removing_node text;

-- consumers made before: their owner's role and name where a Tidemark token names the owner (an
-- OAuth subject's stays unknown, and counts only against its owner's own quota)
UPDATE tidemark.event_consumer c SET owner_role = t.pg_role, owner_name = t.name
  FROM tidemark.api_token t WHERE t.id::text = c.owner;

CREATE INDEX event_consumer_owner_role ON tidemark.event_consumer (owner_role);
CREATE INDEX event_consumer_last_used ON tidemark.event_consumer (last_used_at);
