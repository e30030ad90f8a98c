-- Tasks of the io.modelcontextprotocol/tasks extension (docs/reference/tasks.md): one row a task, so
-- that any gateway of any node answers tasks/get for it and a task outlives the node that started it.
-- state is the task as the gateway wrote it (JSON text: its caller, status, result or error), changed
-- only over the exact text a change was made from, so that two gateways never both win. A row past
-- expires_at is never read; the command role removes it. Only Tidemark's login reads and writes it.
CREATE TABLE tidemark.task (
  id         text PRIMARY KEY,
  caller_id  text NOT NULL,
  state      text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX task_expires_at_idx ON tidemark.task (expires_at);
