// The 2025-11-25 tasks of examples/everything (experimental in that revision) through the
// official MCP TypeScript SDK client, v1, whose `experimental.tasks` speaks them. Run by
// scripts/tasks-2025.sh, once over stdio and once over Streamable HTTP:
//
//   node check.mjs stdio BIN      node check.mjs http URL
//
// Checks: the server declares task-augmented tools/call; tools/list gives execution.taskSupport;
// a task that asks (confirm_delete) is created `working`, its elicitation reaches the client
// while it waits on tasks/result and names the task, and its result is the tool's; a task-only
// tool that reports a tool error (failing_job) is `failed` with its isError result on
// tasks/result, and refused (-32601) when called without a task; a long task (slow_compute) is
// cancelled. Prints one line and exits 0, or says what failed and exits 1.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [how, target] = process.argv.slice(2);
if (!['stdio', 'http'].includes(how) || !target) {
  console.error('usage: node check.mjs stdio BIN | http URL');
  process.exit(2);
}
const fail = (why) => {
  console.error(`tasks-2025: ${how}: ${why}`);
  process.exit(1);
};
const json = (v) => JSON.stringify(v);

const client = new Client({ name: 'tasks-2025-check', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params);
  return { action: 'accept', content: { confirm: true } };
});
const transport =
  how === 'stdio'
    ? new StdioClientTransport({ command: target, args: [], stderr: 'ignore' })
    : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);

const caps = client.getServerCapabilities();
if (!caps?.tasks?.requests?.tools?.call) fail(`no task-augmented tools/call declared: ${json(caps)}`);
const { tools } = await client.listTools();
const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
if (support.failing_job !== 'required' || support.confirm_delete !== 'optional' || support.greet !== undefined) {
  fail(`execution.taskSupport: ${json(support)}`);
}

// Every message of a task-augmented call, as the SDK reports them.
async function stream(name, args) {
  const seen = [];
  const messages = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: {} });
  for await (const message of messages) seen.push(message);
  return seen;
}

// A task that asks.
let seen = await stream('confirm_delete', { filename: 'notes.txt' });
const created = seen.find((m) => m.type === 'taskCreated');
if (!created || created.task.status !== 'working') fail(`confirm_delete made no working task: ${json(seen)}`);
const result = seen.find((m) => m.type === 'result');
if (result?.result.content?.[0]?.text !== 'Deleted notes.txt') fail(`confirm_delete: ${json(seen)}`);
const ask = asked.find((p) => p.message === 'Delete notes.txt?');
if (!ask) fail(`its question never came: ${json(asked)}`);
if (ask._meta?.['io.modelcontextprotocol/related-task']?.taskId !== created.task.taskId) {
  fail(`its question does not name the task: ${json(ask)}`);
}

// A task-only tool that reports a tool error.
seen = await stream('failing_job', {});
const job = seen.find((m) => m.type === 'taskCreated');
if (!job) fail(`failing_job made no task: ${json(seen)}`);
const ended = await client.experimental.tasks.getTask(job.task.taskId);
if (ended.status !== 'failed') fail(`failing_job ended ${json(ended)}`);
const payload = await client.experimental.tasks.getTaskResult(job.task.taskId, CallToolResultSchema);
if (payload.isError !== true || !/corrupt/.test(payload.content?.[0]?.text ?? '')) fail(`failing_job's result: ${json(payload)}`);
try {
  await client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema);
  fail('failing_job was served without a task');
} catch (e) {
  if (e.code !== -32601) fail(`failing_job without a task: ${e}`);
}

// A long task, cancelled.
const long = await client.request(
  { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30 }, task: { ttl: 60000 } } },
  CreateTaskResultSchema
);
if (long.task.ttl !== 60000) fail(`the ttl asked for is not the task's: ${json(long)}`);
const cancelled = await client.experimental.tasks.cancelTask(long.task.taskId);
if (cancelled.status !== 'cancelled') fail(`tasks/cancel: ${json(cancelled)}`);
const after = await client.experimental.tasks.getTask(long.task.taskId);
if (after.status !== 'cancelled') fail(`after tasks/cancel: ${json(after)}`);

await client.close();
console.log(`tasks-2025: ${how}: ok (a task that asks, a failed task-only tool, its plain call refused, a task cancelled)`);
process.exit(0);
