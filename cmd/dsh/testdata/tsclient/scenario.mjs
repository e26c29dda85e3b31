// scenario.mjs drives a built dsh with the official TypeScript MCP SDK, the client most MCP
// users run, and checks the protocol contract as that client sees it: the handshake, every
// tool's schemas compiled by ajv in strict mode (JSON Schema draft 2020-12), each tool's result
// shapes (the SDK validates structuredContent against the tool's outputSchema on every call),
// progress notifications, cancellation, and the policy's asks answered by elicitation.
//
//	node scenario.mjs stdio DSH WORKDIR        spawn DSH mcp (one-shot, sandboxed, persistent)
//	node scenario.mjs http URL TOKEN WORKDIR   connect to a running dsh mcp -http
//
// Run by cmd/dsh/tsclient_test.go, which builds dsh, installs this directory's locked packages
// and starts the HTTP server. Each failed check prints a line starting with "FAIL"; the last
// line is "tsclient: N checks, M failed", and the exit code is 1 when M > 0.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import Ajv2020 from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';

// The policy the one-shot servers run with: everything runs but `touch`, which is asked, and
// `rm`, which is denied.
const policy = { default: 'allow', ask: ['touch *'], deny: ['rm'] };

let checks = 0;
const failures = [];

// step runs one named part of the scenario; an exception fails it and the scenario goes on.
async function step(name, fn) {
  checks++;
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (err) {
    failures.push(name);
    console.log(`FAIL ${name}: ${err instanceof Error ? err.stack ?? err.message : err}`);
  }
}

// strictAjv returns an ajv for draft 2020-12 that refuses anything strict mode refuses:
// unknown keywords, ignored keywords, types that do not fit, required properties not defined.
function strictAjv() {
  return new Ajv2020({ strict: true, allErrors: true });
}

// newClient returns an SDK client that answers elicitations with answer() (null: the client
// has no elicitation capability) and validates results with a strict draft 2020-12 ajv.
function newClient(answer) {
  const capabilities = answer ? { elicitation: { form: {} } } : {};
  const client = new Client(
    { name: 'dsh-tsclient', version: '0.0.0' },
    { capabilities, jsonSchemaValidator: new AjvJsonSchemaValidator(strictAjv()) },
  );
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => answer(req.params));
  }
  return client;
}

const bashArgs = (command, extra = {}) => ({ command, description: 'tsclient scenario step', ...extra });

const textOf = (res) => res.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

// until calls fn every 20 ms until it returns a truthy value, for at most ms; it returns that
// value or throws what.
async function until(ms, what, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20)); // polling, bounded by the deadline
  }
}

// alive reports whether process pid exists and is not a zombie.
function alive(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  return !/\) [ZX] /.test(stat);
}

const readPID = (file) => until(10000, `a pid in ${file}`, () => {
  const s = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return s.endsWith('\n') ? Number(s.trim()) : 0;
});

// checkTools lists the tools and compiles every inputSchema and outputSchema with a strict
// ajv; it returns the tools by name and the compiled validators.
async function checkTools(client, want) {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), want, 'tools/list names, sorted');
  const ajv = strictAjv();
  const byName = {};
  for (const t of tools) {
    assert.ok(t.description, `${t.name}: a description`);
    assert.ok(t.title, `${t.name}: a title`);
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      assert.equal(typeof t.annotations?.[hint], 'boolean', `${t.name}: annotation ${hint}`);
    }
    assert.equal(t.inputSchema.type, 'object', `${t.name}: inputSchema is an object schema`);
    assert.ok(t.outputSchema, `${t.name}: an outputSchema`);
    byName[t.name] = {
      tool: t,
      input: ajv.compile(t.inputSchema), // throws on anything strict mode refuses
      output: ajv.compile(t.outputSchema),
    };
  }
  return byName;
}

// call calls a tool and, for a result that is not an error, validates its structured content
// again with the scenario's own compiled schema (the SDK has done so too).
async function call(client, tools, name, args, options) {
  const res = await client.callTool({ name, arguments: args }, undefined, options);
  if (!res.isError) {
    assert.ok(res.structuredContent, `${name}: a successful result carries structuredContent`);
    const v = tools[name].output;
    assert.ok(v(res.structuredContent), `${name}: ${JSON.stringify(res.structuredContent)}: ${JSON.stringify(v.errors)}`);
  }
  return res;
}

// oneShot runs the scenario of the one-shot tools (bash, bash_output, bash_kill, bash_tasks)
// over a connected client whose elicitation answers come from answers (a queue, one per ask).
async function oneShot(client, answers, asked, workdir) {
  let tools;
  await step('tools/list: four tools, every schema compiles in strict draft 2020-12', async () => {
    tools = await checkTools(client, ['bash', 'bash_kill', 'bash_output', 'bash_tasks']);
    assert.ok(tools.bash.input(bashArgs('true')), 'a valid bash call passes its inputSchema');
    assert.ok(!tools.bash.input({ command: 'true' }), 'a bash call without description fails its inputSchema');
    assert.ok(!tools.bash.input(bashArgs(1)), 'a numeric command fails its inputSchema');
    assert.match(tools.bash.tool.description, /Asked \(a person must approve\): `touch \*`\. Denied: `rm`\./, 'the bash description states the policy');
  });
  if (!tools) return;
  const pids = [];

  // Depends on bash_tasks answering {"tasks":[]} for a session with no tasks (issue 21, item 1).
  await step('bash_tasks with no tasks: an empty list', async () => {
    const res = await call(client, tools, 'bash_tasks', {});
    assert.deepEqual(res.structuredContent.tasks, []);
  });

  await step('bash: output and exit code 0', async () => {
    const res = await call(client, tools, 'bash', bashArgs('echo hello; echo oops >&2'));
    const s = res.structuredContent;
    assert.equal(s.exitCode, 0);
    assert.equal(s.stdout.bytes, 6);
    assert.equal(s.stderr.bytes, 5);
    assert.match(textOf(res), /hello\n/);
    assert.match(textOf(res), /oops/);
  });

  await step('bash: a non-zero exit is a normal result with its marker', async () => {
    const res = await call(client, tools, 'bash', bashArgs('exit 3'));
    assert.equal(res.isError, undefined);
    assert.equal(res.structuredContent.exitCode, 3);
    assert.match(textOf(res), /\[exit code: 3\]$/);
  });

  await step('bash: killed by a signal', async () => {
    const res = await call(client, tools, 'bash', bashArgs('kill -KILL $$'));
    assert.equal(res.structuredContent.signal, 'SIGKILL');
    assert.equal(res.structuredContent.exitCode, undefined);
    assert.match(textOf(res), /\[killed by signal: SIGKILL\]$/);
  });

  await step('bash: timed out', async () => {
    const res = await call(client, tools, 'bash', bashArgs('echo $$ > to.pid; exec sleep 60', { timeoutMs: 300, workdir }));
    assert.equal(res.structuredContent.timedOut, true);
    assert.equal(res.structuredContent.timeoutMs, 300);
    assert.match(textOf(res), /^\[timed out after 300ms\]$/m);
    pids.push(Number(fs.readFileSync(path.join(workdir, 'to.pid'), 'utf8')));
  });

  await step('bash: truncated output with its spill file', async () => {
    const res = await call(client, tools, 'bash', bashArgs("head -c 200000 /dev/zero | tr '\\0' a"));
    const out = res.structuredContent.stdout;
    assert.equal(out.bytes, 200000);
    assert.ok(out.omittedBytes > 0, `omittedBytes ${out.omittedBytes}`);
    assert.equal(out.spillBytes, 200000);
    assert.equal(fs.statSync(out.spillPath).size, 200000, 'the spill file holds the whole stream');
    assert.ok(textOf(res).includes(`[output truncated: ${out.omittedBytes} bytes omitted; full output: ${out.spillPath}]`));
  });

  await step('bash: invalid arguments are an error result listing the violation', async () => {
    const res = await client.callTool({ name: 'bash', arguments: { command: 'true' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^Error: invalid arguments: .*description/);
  });

  await step('an unknown tool is a JSON-RPC error', async () => {
    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), (err) => err instanceof McpError && err.code === -32602);
  });

  let running;
  await step('bash in the background, then bash_tasks, bash_output and bash_kill of a running task', async () => {
    const pidFile = path.join(workdir, 'bg.pid');
    const res = await call(client, tools, 'bash', bashArgs(`echo $$ > ${pidFile}; echo started; exec sleep 300`, { run_in_background: true }));
    running = res.structuredContent.taskId;
    assert.match(running, /^bash-\d+$/);
    pids.push(await readPID(pidFile));
    const list = await call(client, tools, 'bash_tasks', {});
    const task = list.structuredContent.tasks.find((t) => t.taskId === running);
    assert.equal(task?.status, 'running');
    assert.ok(!Number.isNaN(Date.parse(task.started)), `started ${task.started}`);
    const out = await call(client, tools, 'bash_output', { task_id: running });
    assert.equal(out.structuredContent.status, 'running');
    assert.equal(out.structuredContent.taskId, running);
    const kill = await call(client, tools, 'bash_kill', { task_id: running });
    assert.equal(kill.structuredContent.killed, true);
    assert.equal(kill.structuredContent.status, 'killed');
    await until(5000, `pid ${pids.at(-1)} gone`, () => !alive(pids.at(-1)));
    const again = await call(client, tools, 'bash_kill', { task_id: running });
    assert.equal(again.structuredContent.killed, undefined, 'a second kill reports the task had already ended');
    assert.equal(again.structuredContent.status, 'killed');
  });

  await step('a background task that completes: bash_output with its exit code', async () => {
    const res = await call(client, tools, 'bash', bashArgs('echo done; exit 4', { run_in_background: true }));
    const id = res.structuredContent.taskId;
    let text = '';
    const done = await until(10000, `${id} completed`, async () => {
      const out = await call(client, tools, 'bash_output', { task_id: id });
      text += textOf(out);
      return out.structuredContent.status === 'completed' && out;
    });
    assert.equal(done.structuredContent.exitCode, 4);
    assert.match(text, /done\n/);
  });

  await step('bash_output of an unknown task is an error result', async () => {
    const res = await client.callTool({ name: 'bash_output', arguments: { task_id: 'bash-999' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^Error: .*bash-999/);
  });

  await step('progress notifications while a foreground command runs', async () => {
    const seen = [];
    const res = await call(client, tools, 'bash', bashArgs('for i in 1 2 3 4 5 6; do echo line$i; sleep 0.3; done'), {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(res.structuredContent.exitCode, 0);
    assert.ok(seen.length >= 2, `${seen.length} notifications`);
    for (let i = 1; i < seen.length; i++) {
      assert.ok(seen[i].progress > seen[i - 1].progress, `progress grows: ${JSON.stringify(seen)}`);
    }
    for (const p of seen) {
      assert.match(p.message, /^line[1-6]$/);
      assert.ok(p.progress <= res.structuredContent.stdout.bytes);
    }
  });

  await step('cancellation: the request is abandoned and its command stopped', async () => {
    const pidFile = path.join(workdir, 'cancel.pid');
    const abort = new AbortController();
    const pending = call(client, tools, 'bash', bashArgs(`echo $$ > ${pidFile}; exec sleep 300`), { signal: abort.signal });
    const pid = await readPID(pidFile);
    pids.push(pid);
    abort.abort('the scenario cancels');
    await assert.rejects(pending);
    await until(10000, `cancelled command (pid ${pid}) gone`, () => !alive(pid));
    const next = await call(client, tools, 'bash', bashArgs('echo after'));
    assert.match(textOf(next), /^after\n/);
  });

  await step('policy: a denied command runs nothing', async () => {
    const keep = path.join(workdir, 'keep.txt');
    fs.writeFileSync(keep, 'keep\n');
    const res = await client.callTool({ name: 'bash', arguments: bashArgs('rm keep.txt', { workdir }) });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^Error: the command policy denies this command: .*the deny rule "rm"/);
    assert.ok(fs.existsSync(keep));
  });

  await step('policy: an ask accepted by elicitation runs the command', async () => {
    const before = asked.length;
    answers.push({ action: 'accept', content: { decision: 'once' } });
    const res = await call(client, tools, 'bash', bashArgs('touch accepted.txt && echo made', { workdir }));
    assert.equal(asked.length, before + 1, 'the user was asked once');
    assert.match(asked.at(-1).message, /touch accepted\.txt/);
    assert.equal(asked.at(-1).requestedSchema.type, 'object');
    assert.match(textOf(res), /^made\n/);
    assert.ok(fs.existsSync(path.join(workdir, 'accepted.txt')));
  });

  await step('policy: an ask declined by elicitation runs nothing', async () => {
    answers.push({ action: 'decline' });
    const res = await client.callTool({ name: 'bash', arguments: bashArgs('touch declined.txt', { workdir }) });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /^Error: a person declined this call/);
    assert.ok(!fs.existsSync(path.join(workdir, 'declined.txt')));
  });

  await step('every elicitation schema compiles in strict draft 2020-12', async () => {
    assert.ok(asked.length >= 2);
    for (const a of asked) strictAjv().compile(a.requestedSchema);
  });
  return pids;
}

// sandboxed runs a server with -sandbox workspace-write: a denied write is a normal result
// that names the denial, and leaving the sandbox is an ask answered by elicitation.
async function sandboxed(dsh, workdir) {
  const answers = [];
  const asked = [];
  const client = newClient((params) => {
    asked.push(params);
    return answers.shift() ?? { action: 'cancel' };
  });
  await client.connect(new StdioClientTransport({ command: dsh, args: ['mcp', '-sandbox', 'workspace-write', '-workdir', workdir], stderr: 'inherit' }));
  try {
    let tools;
    await step('sandbox: tools/list compiles', async () => {
      tools = await checkTools(client, ['bash', 'bash_kill', 'bash_output', 'bash_tasks']);
    });
    if (!tools) return;
    const outside = path.join(path.dirname(workdir), `outside-${process.pid}.txt`);
    await step('sandbox: a write outside the workspace is denied, with the facts', async () => {
      const res = await call(client, tools, 'bash', bashArgs(`echo x > ${outside}`));
      const s = res.structuredContent;
      assert.equal(s.exitCode, 1);
      assert.equal(s.sandbox?.mode, 'workspace-write');
      assert.equal(s.sandbox?.network, 'off');
      assert.match(s.sandbox?.denial ?? '', /write outside the workspace denied/);
      assert.ok(!fs.existsSync(outside));
    });
    await step('sandbox: leaving it is asked; declined, the command does not run', async () => {
      answers.push({ action: 'decline' });
      const res = await client.callTool({ name: 'bash', arguments: bashArgs(`echo x > ${outside}`, { sandbox: 'off', justification: 'the scenario writes outside' }) });
      assert.equal(res.isError, true);
      assert.equal(asked.length, 1);
      assert.ok(!fs.existsSync(outside));
    });
    await step('sandbox: leaving it is asked; accepted, the command runs unconfined', async () => {
      answers.push({ action: 'accept', content: { decision: 'once' } });
      const res = await call(client, tools, 'bash', bashArgs(`echo x > ${outside} && echo wrote`, { sandbox: 'off', justification: 'the scenario writes outside' }));
      assert.equal(asked.length, 2);
      assert.match(textOf(res), /^wrote\n/);
      assert.ok(fs.existsSync(outside));
      fs.rmSync(outside);
    });
  } finally {
    await client.close();
  }
}

// persistent runs a server with -persistent: its one bash keeps the shell's state, reports
// progress, and its results match its own outputSchema.
async function persistent(dsh, workdir) {
  const client = newClient(null);
  await client.connect(new StdioClientTransport({ command: dsh, args: ['mcp', '-persistent', '-workdir', workdir], stderr: 'inherit' }));
  try {
    let tools;
    await step('persistent: tools/list compiles', async () => {
      tools = await checkTools(client, ['bash']);
    });
    if (!tools) return;
    await step('persistent: state kept between calls, exit code in the facts', async () => {
      await call(client, tools, 'bash', { command: 'mkdir -p sub && cd sub && X=kept' });
      const res = await call(client, tools, 'bash', { command: 'echo "$X $(basename "$PWD")"; false' });
      assert.equal(res.structuredContent.outcome, 'completed');
      assert.equal(res.structuredContent.exitCode, 1);
      assert.match(textOf(res), /^kept sub/);
    });
    await step('persistent: progress notifications', async () => {
      const seen = [];
      await call(client, tools, 'bash', { command: 'for i in 1 2 3 4 5 6; do echo step$i; sleep 0.3; done' }, { onprogress: (p) => seen.push(p) });
      assert.ok(seen.length >= 2, `${seen.length} notifications`);
      for (const p of seen) assert.match(p.message, /^step[1-6]$/);
    });
  } finally {
    await client.close();
  }
}

// connected returns a client connected over transport whose elicitations are answered from
// the queue answers and recorded in asked, and checks the handshake.
async function connected(transport, answers, asked) {
  const client = newClient((params) => {
    asked.push(params);
    return answers.shift() ?? { action: 'cancel' };
  });
  await client.connect(transport);
  await step('initialize: dsh, the tools capability, instructions', async () => {
    assert.equal(client.getServerVersion()?.name, 'dsh');
    assert.ok(client.getServerCapabilities()?.tools, 'the tools capability');
    assert.ok(client.getInstructions(), 'server instructions');
  });
  return client;
}

// gone checks that every process the scenario recorded has ended.
async function gone(pids) {
  await step('nothing left running', async () => {
    for (const pid of pids) await until(5000, `pid ${pid} gone`, () => !alive(pid));
  });
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const answers = [];
  const asked = [];
  if (mode === 'stdio') {
    const [dsh, workdir] = rest;
    const policyFile = path.join(workdir, '..', 'policy.json');
    fs.writeFileSync(policyFile, JSON.stringify(policy));
    const transport = new StdioClientTransport({ command: dsh, args: ['mcp', '-policy', policyFile, '-workdir', workdir], stderr: 'inherit' });
    const client = await connected(transport, answers, asked);
    const pids = (await oneShot(client, answers, asked, workdir)) ?? [];
    await client.close();
    await gone(pids);
    await sandboxed(dsh, workdir);
    await persistent(dsh, workdir);
  } else if (mode === 'http') {
    const [url, token, workdir] = rest;
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const client = await connected(transport, answers, asked);
    await step('HTTP: a session id and the negotiated protocol version', async () => {
      assert.ok(transport.sessionId, 'Mcp-Session-Id');
      assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
    });
    const pids = (await oneShot(client, answers, asked, workdir)) ?? [];
    await step('HTTP: DELETE ends the session', async () => {
      await transport.terminateSession();
      assert.equal(transport.sessionId, undefined);
    });
    await client.close();
    await gone(pids);
  } else {
    console.error('usage: node scenario.mjs stdio DSH WORKDIR | http URL TOKEN WORKDIR');
    process.exit(2);
  }
  console.log(`tsclient: ${checks} checks, ${failures.length} failed`);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

await main();
