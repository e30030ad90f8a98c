// Drives a Tidemark endpoint with the official MCP TypeScript SDK client, as a real agent would:
// connect, list tools, call one, subscribe to a resource, receive an update, end the session.
// Usage: node sdk-client.mjs <url> <tool> <resourceUri> <triggerTool> [token]
//        node sdk-client.mjs errors <url> [token]
//        node sdk-client.mjs parallel <url> <workers> <callsPerWorker> [token]
//        node sdk-client.mjs watch <url> <token>
//        node sdk-client.mjs named <url> <token>
//        node sdk-client.mjs hold <url> <resourceUri> <token>
// The second form provokes every tool error a client can against the demo database and checks that
// callTool, with the schemas from listTools cached as every host has them, delivers each as
// isError with its code and message rather than throwing.
// The third runs <workers> callTool loops side by side in ONE 2025-11-25 session, as an agent host
// that fans out does: get_row on the demo customers, every fourth call with an onprogress handler
// (so its answer is an event stream). The client declares elicitation, sampling and roots, as hosts
// do. It prints one JSON line with the counts and calls/s; "OK" only when every call succeeded with
// the right row.
// The fourth drives watch through every kind of result it can provoke with the tools alone
// (snapshot, checkpoint, patch, reset), so that the SDK checks each against watch's outputSchema.
// Prints one JSON line per step and "OK" at the end; exits non-zero on any failure.
// The fifth drives the demo database's named tools (docs/guides/named-tools.md) as hosts call them:
// a read, a change planned and committed, a removal refused without consent and committed with it,
// a parameter out of its limits, a value that looks like SQL, and a reaction to an event of the
// ticket-triage consumer with its causation token, then one refused once its lease ended.
// The sixth subscribes to a resource and holds the session, as a background agent does, while the
// test changes the cluster around it: one JSON line per notification ("updated") and per error the
// transport reports ("transport-error"), until the test writes "end" on its standard input.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

if (process.argv[2] === 'parallel') {
  const [, , , url, workersArg, callsArg, token] = process.argv;
  const workers = Number(workersArg);
  const callsEach = Number(callsArg);
  setTimeout(() => { console.error('FAIL: timed out'); process.exit(1); }, 600_000).unref();
  const client = new Client({ name: 'tidemark-sdk-parallel', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  const transport = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} } });
  await client.connect(transport);
  await client.listTools();
  const counts = { calls: 0, ok: 0, wrong: 0, errors: 0, with_progress: 0 };
  const firstErrors = [];
  const worker = async (w) => {
    for (let i = 0; i < callsEach; i++) {
      const key = 1 + ((w * callsEach + i) % 500);
      const progress = i % 4 === 3;
      counts.calls++;
      try {
        const r = await client.callTool({ name: 'get_row', arguments: { table: 'customers', key } }, undefined,
          progress ? { onprogress: () => {} } : undefined);
        const row = r.structuredContent?.row;
        if (!r.isError && row?.id === key && row?.email === `customer${key}@example.com`) {
          counts.ok++;
          if (progress) counts.with_progress++;
        } else {
          counts.wrong++;
          if (firstErrors.length < 5) firstErrors.push(JSON.stringify(r).slice(0, 300));
        }
      } catch (e) {
        counts.errors++;
        if (firstErrors.length < 5) firstErrors.push(String(e?.message ?? e).slice(0, 300));
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  const seconds = (performance.now() - started) / 1000;
  console.log(JSON.stringify({ step: 'parallel', value: { workers, ...counts, seconds: Number(seconds.toFixed(2)),
    calls_per_s: Number((counts.calls / seconds).toFixed(1)), first_errors: firstErrors } }));
  await transport.terminateSession();
  await client.close();
  if (counts.ok !== workers * callsEach) process.exit(1);
  console.log('OK');
  process.exit(0);
}

if (process.argv[2] === 'named') {
  const [, , , url, token] = process.argv;
  const fail = (why) => { console.error('FAIL: ' + why); process.exit(1); };
  const step = (name, value) => console.log(JSON.stringify({ step: name, value }));
  setTimeout(() => fail('timed out'), 120_000).unref();
  const client = new Client({ name: 'tidemark-sdk-named', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  const { tools } = await client.listTools();
  for (const name of ['open_tickets_of_customer', 'customer_card', 'close_ticket', 'delete_spam_ticket', 'customer_by_email']) {
    if (!tools.some((t) => t.name === name)) fail(`${name} not listed`);
  }
  const close = tools.find((t) => t.name === 'close_ticket');
  if (!close.inputSchema.properties.ticket_id || close.inputSchema.properties.closed_by) fail('close_ticket schema: ' + JSON.stringify(close.inputSchema));
  const call = (name, args) => client.callTool({ name, arguments: args });
  const ok = async (name, args) => {
    const r = await call(name, args);
    if (r.isError) fail(`${name} failed: ` + JSON.stringify(r));
    return r.structuredContent;
  };
  const error = async (code, name, args) => {
    const r = await call(name, args);
    if (r.isError !== true || r.structuredContent?.error?.code !== code) fail(`${name}: expected ${code}: ` + JSON.stringify(r));
    return r.structuredContent.error;
  };
  const key = (what) => `sdk-named-${what}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const open = await ok('open_tickets_of_customer', { customer_id: 12 });
  step('read', { rows: open.rows.length, columns: open.columns.map((c) => c.name) });
  const insert = async (rows) => ok('insert_rows', { table: 'support_tickets', rows,
    plan_id: (await ok('insert_rows', { table: 'support_tickets', rows })).plan_id, idempotency_key: key('insert') });
  await insert([{ customer_id: 12, subject: 'Named tools', body: 'sdk' }]);
  const ticketId = (await ok('open_tickets_of_customer', { customer_id: 12 })).rows[0].id;
  const args = { ticket_id: ticketId, reason: 'spam' };
  const plan = await ok('close_ticket', args);
  if (plan.mode !== 'plan' || plan.totals.updated !== 1) fail('close_ticket plan: ' + JSON.stringify(plan));
  const commit = await ok('close_ticket', { ...args, plan_id: plan.plan_id, idempotency_key: key('close') });
  step('committed', { mode: commit.mode, updated: commit.totals.updated, ticket: ticketId });
  const removal = { ticket_id: ticketId };
  const removalPlan = await ok('delete_spam_ticket', removal);
  if (removalPlan.confirmation_required !== true) fail('removal plan: ' + JSON.stringify(removalPlan));
  const removalKey = key('removal');
  await error('DECISION_REQUIRED', 'delete_spam_ticket', { ...removal, plan_id: removalPlan.plan_id, idempotency_key: removalKey });
  const removed = await ok('delete_spam_ticket', { ...removal, plan_id: removalPlan.plan_id, idempotency_key: removalKey, confirm: true });
  step('consented', { deleted: removed.totals.deleted });
  const limits = await error('INVALID_ARGUMENTS', 'close_ticket', { ticket_id: 0, reason: 'because' });
  step('limits', limits.faults);
  const spliced = await ok('customer_by_email', { email: "x' OR '1'='1" });
  step('bound', { rows: spliced.rows.length });

  const triage = { consumer: 'sdk-triage', tables: ['support_tickets'], max: 1, wait_ms: 200 };
  await ok('events_next', triage);
  await insert([{ customer_id: 7, subject: 'React to me', body: 'sdk' }, { customer_id: 7, subject: 'Too late', body: 'sdk' }]);
  const next = async () => {
    for (let i = 0; i < 40; i++) {
      const got = await ok('events_next', { ...triage, wait_ms: 2000 });
      if (got.events.length > 0) return got.events[0];
    }
    fail('no event');
  };
  const event = await next();
  if (!event.context?.customer_card?.rows?.[0] || event.context.customer_card.rows[0].id !== 7) fail('context: ' + JSON.stringify(event));
  const reaction = event.reactions.find((r) => r.tool === 'close_ticket') ?? fail('no reaction: ' + JSON.stringify(event));
  const reacting = { ticket_id: event.change.after.id, reason: 'resolved', causation_token: reaction.causation_token };
  const reactionPlan = await ok('close_ticket', reacting);
  const reacted = await ok('close_ticket', { ...reacting, plan_id: reactionPlan.plan_id });
  step('reacted', { event: event.event_id, mode: reacted.mode, key: reacted.idempotency_key, context: Object.keys(event.context) });
  await ok('events_ack', { consumer: triage.consumer, event_ids: [event.event_id], lease_token: event.lease_token });
  const late = await next();
  const lateToken = late.reactions[0].causation_token;
  await ok('events_ack', { consumer: triage.consumer, event_ids: [late.event_id], lease_token: late.lease_token });
  const lateArgs = { ticket_id: late.change.after.id, reason: 'resolved', causation_token: lateToken };
  const latePlan = await ok('close_ticket', lateArgs);
  const expired = await error('LEASE_EXPIRED', 'close_ticket', { ...lateArgs, plan_id: latePlan.plan_id });
  step('expired', { argument: expired.argument });
  await transport.terminateSession();
  await client.close();
  console.log('OK');
  process.exit(0);
}

if (process.argv[2] === 'hold') {
  const [, , , url, uri, token] = process.argv;
  const say = (name, value) => console.log(JSON.stringify({ step: name, value }));
  const client = new Client({ name: 'tidemark-sdk-hold', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} } });
  client.onerror = (e) => say('transport-error', String(e?.message ?? e));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => say('updated', n.params.uri));
  await client.connect(transport);
  await client.subscribeResource({ uri });
  say('subscribed', uri);
  const { createInterface } = await import('node:readline');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === 'end') break;
  }
  await transport.terminateSession().catch((e) => say('transport-error', String(e?.message ?? e)));
  await client.close();
  console.log('OK');
  process.exit(0);
}

const errorsMode = process.argv[2] === 'errors';
const watchMode = process.argv[2] === 'watch';
const [url, toolName, resourceUri, triggerTool, token] = errorsMode || watchMode
  ? [process.argv[3], null, null, null, process.argv[4]] : process.argv.slice(2);
const step = (name, value) => console.log(JSON.stringify({ step: name, value }));
const fail = (why) => { console.error('FAIL: ' + why); process.exit(1); };
// the errors run waits out one statement timeout (TIMEOUT)
setTimeout(() => fail('timed out'), errorsMode ? 90_000 : 30_000).unref();

const headers = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: 'tidemark-sdk-test', version: '1.0.0' }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });

if (errorsMode) {
  await client.connect(transport);
  await client.listTools();
  // callTool as hosts call it: an exception here is the failure this run exists to catch
  const call = (name, args) => client.callTool({ name, arguments: args });
  const ok = async (name, args) => {
    const r = await call(name, args);
    if (r.isError) fail(`${name} failed: ` + JSON.stringify(r));
    return r.structuredContent;
  };
  const expectError = async (code, name, args) => {
    const r = await call(name, args);
    const e = r.structuredContent?.error;
    if (r.isError !== true) fail(`${code}: ${name} did not fail: ` + JSON.stringify(r));
    if (e?.code !== code) fail(`${code}: ${name} failed with another code: ` + JSON.stringify(r));
    if (typeof e.message !== 'string' || e.message.length === 0) fail(`${code}: no message: ` + JSON.stringify(r));
    if (!r.content[0].text.includes(`${code}: ${e.message}`)) fail(`${code}: the text lacks the code and message: ` + r.content[0].text);
    step('error', { code, tool: name, message: e.message });
  };
  const key = (what) => `sdk-client-${what}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const commit = (args, plan, idempotencyKey, extra = {}) => ({ ...args, plan_id: plan.plan_id, idempotency_key: idempotencyKey, ...extra });

  await expectError('INVALID_ARGUMENTS', 'list_tables', { schemas: 'public' });
  await expectError('NOT_FOUND', 'describe_table', { table: 'no_such_table' });
  await expectError('READ_ONLY', 'query', { sql: 'DELETE FROM orders' });
  await expectError('PERMISSION_DENIED', 'query', { sql: 'SELECT rolname, rolpassword FROM pg_authid' });
  await expectError('TIMEOUT', 'query', { sql: 'SELECT pg_sleep(30)' });
  await expectError('LIMIT_EXCEEDED', 'query', { sql: "SELECT repeat('x', 5000000) AS big" });
  await expectError('INVALID_CURSOR', 'query', { sql: 'SELECT 1', cursor: 'not-a-cursor' });

  const firstPage = await ok('list_rows', { table: 'support_tickets', limit: 1 });
  const touch = { table: 'support_tickets', key: 1, set: { labels: ['sdk-client'] } };
  await ok('update_rows', commit(touch, await ok('update_rows', touch), key('touch')));
  await expectError('CURSOR_STALE', 'list_rows', { table: 'support_tickets', limit: 1, cursor: firstPage.next_cursor });

  await expectError('INVALID_PLAN', 'update_rows', { ...touch, plan_id: 'not-a-plan', idempotency_key: key('forged') });
  const once = { table: 'products', key: 1, set: { active: true } };
  const plan = await ok('update_rows', once);
  const usedKey = key('once');
  await ok('update_rows', commit(once, plan, usedKey));
  await expectError('PLAN_CHANGED', 'update_rows', commit(once, plan, key('again')));
  const other = { table: 'products', key: 2, set: { active: true } };
  await expectError('IDEMPOTENCY_CONFLICT', 'update_rows', commit(other, await ok('update_rows', other), usedKey));
  const removal = { table: 'support_tickets', key: 1 };
  await expectError('DECISION_REQUIRED', 'delete_rows', commit(removal, await ok('delete_rows', removal), key('removal')));
  await expectError('CONSTRAINT_VIOLATION', 'insert_rows', { table: 'products', rows: [{ sku: key('sku'), name: 'Below zero', price: -1 }] });
  await expectError('TRANSACTION_STATEMENT', 'execute', { sql: 'COMMIT' });
  await expectError('TRANSACTION_STATEMENT', 'transaction', { statements: [{ sql: 'UPDATE products SET active = true WHERE id = 1' }, { sql: 'ROLLBACK' }] });

  await transport.terminateSession();
  await client.close();
  console.log('OK');
  process.exit(0);
}

if (watchMode) {
  await client.connect(transport);
  await client.listTools();
  const ok = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) fail(`${name} failed: ` + JSON.stringify(r));
    return r.structuredContent;
  };
  const commit = async (tool, args) => {
    const plan = await ok(tool, args);
    await ok(tool, { ...args, plan_id: plan.plan_id, idempotency_key: `sdk-watch-${Date.now()}-${Math.random()}` });
  };
  const args = { table: 'orders', where: { column: 'id', op: 'lte', value: 3 }, columns: ['id', 'status', 'total'] };
  const kinds = new Set();
  const seen = (s) => { kinds.add(s.kind); step('watch', { kind: s.kind, reason: s.reason, rows: s.rows?.length, changes: s.changes?.length }); return s; };
  let s = seen(await ok('watch', args));
  s = seen(await ok('watch', { ...args, cursor: s.cursor }));
  // a change to a watched row, until its patch arrives (the first answers may be checkpoints)
  await commit('update_rows', { table: 'orders', key: 2, set: { total: 12.34 } });
  for (let i = 0; i < 20 && s.kind !== 'patch'; i++) s = seen(await ok('watch', { ...args, cursor: s.cursor, wait_ms: 5000 }));
  if (s.kind !== 'patch') fail('no patch');
  // one transaction over 1000 rows of the table: no patch can hold it, so the watch resets
  await commit('execute', { sql: 'UPDATE orders SET shipping_address = shipping_address' });
  for (let i = 0; i < 20 && s.kind !== 'reset'; i++) s = seen(await ok('watch', { ...args, cursor: s.cursor, wait_ms: 5000 }));
  if (s.kind !== 'reset') fail('no reset');
  s = seen(await ok('watch', { ...args, cursor: s.cursor, wait_ms: 5000 }));
  for (const kind of ['snapshot', 'checkpoint', 'patch', 'reset']) if (!kinds.has(kind)) fail(`no ${kind}`);
  await transport.terminateSession();
  await client.close();
  console.log('OK');
  process.exit(0);
}

let resolveUpdate;
const updated = new Promise((r) => (resolveUpdate = r));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolveUpdate(n.params.uri));

await client.connect(transport);
step('connected', { protocol: transport.protocolVersion, session: Boolean(transport.sessionId), server: client.getServerVersion().name });
const { tools } = await client.listTools();
step('tools', tools.map((t) => t.name));
if (!tools.some((t) => t.name === toolName)) fail(`tool ${toolName} not listed`);
const result = await client.callTool({ name: toolName, arguments: {} });
if (result.isError) fail('tool call failed: ' + JSON.stringify(result));
step('called', { tool: toolName, structured: Boolean(result.structuredContent), text: result.content[0]?.text?.split('\n')[0] });
await client.subscribeResource({ uri: resourceUri });
step('subscribed', resourceUri);
const triggered = await client.callTool({ name: triggerTool, arguments: {} });
if (triggered.isError) fail('trigger failed: ' + JSON.stringify(triggered));
const uri = await updated;
if (uri !== resourceUri) fail(`update for ${uri}, expected ${resourceUri}`);
step('updated', uri);
await client.unsubscribeResource({ uri: resourceUri });
await transport.terminateSession();
await client.close();
step('ended', true);
console.log('OK');
process.exit(0);
