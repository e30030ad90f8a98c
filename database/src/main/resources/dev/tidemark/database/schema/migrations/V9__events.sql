-- Durable events consumers (events_next and the other events tools). A consumer belongs to the
-- caller that created it: its name is scoped by the caller's id, and its share group id names
-- both, so no name reaches another caller's consumer. The broker holds the leases and delivery
-- counts; Tidemark keeps what the broker does not: who owns the consumer, its tables and lease,
-- the commit time before which it delivers nothing (its creation, moved by events_seek), counters
-- for events_status, and its dead letters.
CREATE TABLE tidemark.event_consumer (
  owner text NOT NULL,
  name text NOT NULL,
  group_id text NOT NULL UNIQUE,
  tables text[] NOT NULL,
  lease_seconds int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivers_from timestamptz,
  delivered bigint NOT NULL DEFAULT 0,
  redelivered bigint NOT NULL DEFAULT 0,
  dead_letter_topic text,
  dead_letter_offset bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (owner, name)
);
COMMENT ON COLUMN tidemark.event_consumer.dead_letter_topic IS
  'The broker''s dead-letter topic of the share group (KIP-1191); null: Tidemark dead-letters past its own limit.';
COMMENT ON COLUMN tidemark.event_consumer.dead_letter_offset IS
  'How far the dead-letter topic was copied into tidemark.event_dead_letter.';
COMMENT ON COLUMN tidemark.event_consumer.delivers_from IS
  'Changes committed before it are acknowledged without being shown; null: every change the topic keeps.';

-- An event delivered events.max-deliveries times without an ack, with the record as the topic
-- held it (the log's images: only Tidemark's login reads this table): stored by Tidemark, or
-- copied from the broker's dead-letter topic.
CREATE TABLE tidemark.event_dead_letter (
  group_id text NOT NULL REFERENCES tidemark.event_consumer (group_id) ON DELETE CASCADE,
  topic_partition int NOT NULL,
  record_offset bigint NOT NULL,
  event_id text NOT NULL,
  delivery_count int NOT NULL,
  record jsonb NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now(),
  redriven_at timestamptz,
  PRIMARY KEY (group_id, topic_partition, record_offset)
);
