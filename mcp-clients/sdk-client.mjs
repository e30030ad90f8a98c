// Drives a Tidemark endpoint with the official MCP TypeScript SDK client, as a real agent would:
// connect, list tools, call one, subscribe to a resource, receive an update, end the session.
// Usage: node sdk-client.mjs <url> <tool> <resourceUri> <triggerTool> [token]
// Prints one JSON line per step and "OK" at the end; exits non-zero on any failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, toolName, resourceUri, triggerTool, token] = process.argv.slice(2);
const step = (name, value) => console.log(JSON.stringify({ step: name, value }));
const fail = (why) => { console.error('FAIL: ' + why); process.exit(1); };
setTimeout(() => fail('timed out after 30 s'), 30_000).unref();

const headers = token ? { Authorization: `Bearer ${token}` } : {};
const client = new Client({ name: 'tidemark-sdk-test', version: '1.0.0' }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });

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
