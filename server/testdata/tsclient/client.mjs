// client.mjs drives `selmem serve` with the TypeScript MCP SDK client (the
// one most hosts build on), over stdio or streamable HTTP: lists, tool
// calls, protocol errors, completions, log messages, a subscription to two
// resources, and a cancelled call. It prints "ok" and exits 0 when every
// check passed; otherwise it prints what failed and exits 1.
//
// Environment: NODE_TOOLS, the directory scripts/install-conformance.sh
// fills; MCP_TRANSPORT, stdio or http; SELMEM_BIN (stdio), the binary, run
// with this process's environment; MCP_URL (http), the /mcp endpoint.
// selmem must allow profile_source to reach 127.0.0.1
// (SELMEM_PROFILE_ALLOWED_HOSTS), where this script serves an endpoint that
// never answers.
//
// Provenance: written for selmem's tests, under the repository's licence;
// it uses the pinned @modelcontextprotocol/sdk (MIT) installed by the script.
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_TOOLS, 'node_modules', 'noop.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const {
  ResourceUpdatedNotificationSchema,
  LoggingMessageNotificationSchema,
} = require('@modelcontextprotocol/sdk/types.js');

const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

// waitFor resolves when cond() holds, checking after every event.
const waiters = [];
const settle = () => { for (const w of [...waiters]) if (w.cond()) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); } };
const waitFor = (cond, what) => new Promise((resolve, reject) => {
  if (cond()) return resolve();
  const timer = setTimeout(() => reject(new Error('timed out waiting for ' + what)), 20000);
  waiters.push({ cond, resolve: () => { clearTimeout(timer); resolve(); } });
});

const updates = [];
const logs = [];
const errors = [];
const client = new Client({ name: 'selmem-tsclient', version: '1.0.0' });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); settle(); });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); settle(); });
client.onerror = (e) => { errors.push(String(e && e.message || e)); settle(); };

const transport = process.env.MCP_TRANSPORT === 'http'
  ? new StreamableHTTPClientTransport(new URL(process.env.MCP_URL))
  : new StdioClientTransport({ command: process.env.SELMEM_BIN, args: ['serve'], env: process.env, stderr: 'ignore' });

// listAll follows nextCursor to the end of a list.
async function listAll(method, key) {
  const items = [];
  let cursor;
  do {
    const page = await client[method](cursor ? { cursor } : {});
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

const text = (res) => (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');

async function rpcError(fn) {
  try { await fn(); } catch (e) { return e; }
  return null;
}

async function main() {
  await client.connect(transport);
  check(client.getServerCapabilities()?.completions, 'no completions capability');
  check(client.getServerCapabilities()?.logging, 'no logging capability');

  // Lists.
  const tools = await listAll('listTools', 'tools');
  check(tools.some((t) => t.name === 'memory_insert'), 'tools/list lacks memory_insert');
  const templates = await listAll('listResourceTemplates', 'resourceTemplates');
  check(templates.some((t) => t.uriTemplate === 'memory://workspaces/{workspace}/context'), 'no context template');
  const prompts = await listAll('listPrompts', 'prompts');
  check(prompts.some((p) => p.name === 'start_session'), 'no start_session prompt');

  // Calls.
  const task = '/memories/workspaces/demo/task.md';
  let res = await client.callTool({ name: 'memory_create', arguments: { path: task, file_text: '- Amounts in EUR.\n' } });
  check(!res.isError && text(res).includes('File created successfully'), 'memory_create: ' + text(res));
  res = await client.callTool({ name: 'memory_view', arguments: { path: '/memories/nope.md' } });
  check(res.isError === true, 'memory_view of a missing file is not isError');
  const resources = await listAll('listResources', 'resources');
  check(resources.some((r) => r.uri === 'memory://workspaces/demo/context'), 'resources/list lacks the demo context');

  // Protocol errors carry their codes.
  let err = await rpcError(() => client.readResource({ uri: 'memory://workspaces/nope/context' }));
  check(err && err.code === -32002, 'read of a missing workspace: ' + (err && err.code));
  err = await rpcError(() => client.getPrompt({ name: 'start_session', arguments: {} }));
  check(err && err.code === -32602, 'start_session without workspace: ' + (err && err.code));
  err = await rpcError(() => client.listResources({ cursor: 'bogus' }));
  check(err && err.code === -32602 && !/base64|illegal/.test(err.message), 'bad cursor: ' + (err && err.code + ' ' + err.message));

  // Completions.
  const c = await client.complete({ ref: { type: 'ref/resource', uri: 'memory://workspaces/{workspace}/task' }, argument: { name: 'workspace', value: 'de' } });
  check(JSON.stringify(c.completion.values) === '["demo"]', 'workspace completion: ' + JSON.stringify(c.completion));

  // Log messages once asked for.
  await client.setLoggingLevel('info');
  await client.callTool({ name: 'memory_view', arguments: { path: task } });
  await waitFor(() => logs.some((l) => String(l.data).includes('memory_view')), 'a log message about memory_view');

  // A subscription to two resources: one update each per change.
  await client.subscribeResource({ uri: 'memory://workspaces/demo/task' });
  await client.subscribeResource({ uri: 'memory://workspaces/demo/context' });
  res = await client.callTool({ name: 'memory_insert', arguments: { path: task, insert_line: 1, insert_text: '- Weeks start on Monday.' } });
  check(!res.isError, 'memory_insert: ' + text(res));
  const count = (uri) => updates.filter((u) => u === uri).length;
  await waitFor(() => count('memory://workspaces/demo/task') >= 1 && count('memory://workspaces/demo/context') >= 1, 'both updates');
  await client.ping();
  await listAll('listTools', 'tools');
  check(count('memory://workspaces/demo/task') === 1, 'task updates: ' + count('memory://workspaces/demo/task'));
  check(count('memory://workspaces/demo/context') === 1, 'context updates: ' + count('memory://workspaces/demo/context'));

  // A cancelled call gets no response and leaves nothing behind.
  let arrived, closed;
  const arrivedP = new Promise((r) => { arrived = r; });
  const closedP = new Promise((r) => { closed = r; });
  const slow = http.createServer((req) => { arrived(); req.socket.on('close', closed); });
  await new Promise((r) => slow.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${slow.address().port}/rows`;
  const abort = new AbortController();
  const call = client.callTool(
    { name: 'profile_source', arguments: { workspace: 'demo', name: 'slow', source: { kind: 'rest', url, timeout_seconds: 300 } } },
    undefined, { signal: abort.signal, timeout: 600000 });
  await arrivedP;
  abort.abort('the user pressed stop');
  err = await rpcError(() => call);
  check(err !== null, 'the cancelled call resolved');
  await closedP; // the server stopped reading the endpoint
  await client.ping();
  await listAll('listTools', 'tools');
  res = await client.callTool({ name: 'memory_view', arguments: { path: '/memories/workspaces/demo/schemas/slow.md' } });
  check(res.isError === true, 'the cancelled profile was stored');
  check(!errors.some((e) => /unknown message ID/i.test(e)), 'a response to the cancelled call arrived: ' + errors.join('; '));
  slow.close();

  await client.close();
}

main().then(() => {
  if (failures.length > 0) {
    console.log('FAIL\n' + failures.join('\n'));
    process.exit(1);
  }
  console.log('ok');
  process.exit(0);
}, (e) => {
  console.log('FAIL\n' + (e && e.stack || e) + '\n' + failures.join('\n'));
  process.exit(1);
});
