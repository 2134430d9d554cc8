import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import { createLogger } from '@molf/logging';
import type { Approval, ApprovalEvent } from '@molf/protocol';
import { FIXTURE_MCP_SERVER } from '@molf/testkit';
import { createWorker, type MolfWorker, type WorkerConfig } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import type { MolfServer } from '../create-server.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import {
  createTempDir,
  FAST_RECONNECT,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';

/** The fixture MCP server; each start appends a line to `startedFile`. */
function fixture(startedFile: string, env: Record<string, string> = {}) {
  return {
    type: 'stdio',
    command: process.execPath,
    args: [FIXTURE_MCP_SERVER],
    env: { FIXTURE_MCP_STARTED_FILE: startedFile, ...env },
  };
}

async function writeMcpJson(workdir: string, servers: Record<string, unknown>): Promise<void> {
  await writeFile(join(workdir, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
}

/** How many times the fixture behind `startedFile` has been started. */
async function startsOf(startedFile: string): Promise<number> {
  const text = await readFile(startedFile, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').length;
}

/** Resolves once the fixture behind `startedFile` has been started `count` times. */
async function waitForStarts(startedFile: string, count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await startsOf(startedFile)) < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for start number ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function watchApprovals(client: MolfClient) {
  const events: ApprovalEvent[] = [];
  const subscription = client.rpc.approvals.events.subscribe({}, { onData: (event) => events.push(event) });
  return {
    requested: () => events.flatMap((event) => (event.type === 'approval.requested' ? [event.approval] : [])),
    resolved: () => events.flatMap((event) => (event.type === 'approval.resolved' ? [event] : [])),
    [Symbol.dispose]: () => subscription.unsubscribe(),
  };
}

async function clientOf(server: MolfServer, token = TEST_CLIENT_TOKEN): Promise<MolfClient> {
  const client = createMolfClient({ url: server.url, token });
  await client.ready();
  return client;
}

/** A server and a project directory, both removed on dispose; `logs` collects the server's log lines. */
async function startProject(options: { logs?: string[] } = {}) {
  const data = await createTempDir();
  const project = await createTempDir();
  const logs = options.logs;
  const logger =
    logs === undefined
      ? undefined
      : await createLogger({
          name: 'server',
          console: 'json',
          destination: new Writable({
            write(chunk: Buffer, _encoding, done) {
              logs.push(chunk.toString());
              done();
            },
          }),
        });
  const server = await startTestServer({ dataDir: data.path, ...(logger === undefined ? {} : { logger }) });
  const client = await clientOf(server);
  const workers: MolfWorker[] = [];
  return {
    server,
    client,
    dataDir: data.path,
    workdir: project.path,
    startedFile: join(project.path, 'fixture-starts.log'),
    async startWorker(options: { serverUrl?: string; keepAlive?: WorkerConfig['keepAlive'] } = {}) {
      const worker = await createWorker({
        serverUrl: options.serverUrl ?? server.url,
        token: TEST_WORKER_TOKEN,
        workdir: project.path,
        reconnect: FAST_RECONNECT,
        ...(options.keepAlive === undefined ? {} : { keepAlive: options.keepAlive }),
      });
      workers.push(worker);
      await worker.registered;
      return worker;
    },
    async [Symbol.asyncDispose]() {
      try {
        for (const worker of workers) await worker.close();
        await client.close();
        await server.close();
      } finally {
        await project[Symbol.asyncDispose]();
        await data[Symbol.asyncDispose]();
      }
    },
  };
}

const hasTool = (server: MolfServer, worker: MolfWorker, tool: string) =>
  server.registry.get(worker.workerId)?.tools.includes(tool) === true;

const statusOf = (worker: MolfWorker, name: string) => worker.mcpServers().find((entry) => entry.name === name)?.status;

function answer(client: MolfClient, approval: Approval | undefined, scope: 'once' | 'always') {
  return client.rpc.approvals.approve.mutate({
    sessionId: approval?.sessionId ?? '',
    approvalId: approval?.approvalId ?? '',
    scope,
  });
}

describe('starting the MCP servers of .mcp.json', () => {
  it('does not start a server added to .mcp.json until a person approves it; "always" starts it and remembers it for the worker', async () => {
    await using project = await startProject();
    const { server, client } = project;
    using watch = watchApprovals(client);
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker();

    await waitFor(() => watch.requested().length === 1, { what: 'the approval to start fixture' });
    const [approval] = watch.requested();
    expect(approval).toMatchObject({
      kind: 'mcp_server',
      sessionId: `worker:${worker.workerId}`,
      workerId: worker.workerId,
      tool: 'mcp.server',
      subjects: [
        { kind: 'name', decision: 'ask', label: expect.stringMatching(/^fixture: (\S+=… )*\S+ \S+ #[0-9a-f]{12}$/) },
      ],
    });
    expect(approval?.subjects[0]?.label).toContain(FIXTURE_MCP_SERVER);
    expect(approval?.alwaysPatterns).toHaveLength(1);
    await waitFor(() => statusOf(worker, 'fixture') === 'awaiting approval', { what: 'the awaiting status' });
    expect(worker.mcpServers()).toMatchObject([{ name: 'fixture', tools: [] }]);
    expect(hasTool(server, worker, 'fixture_echo')).toBe(false);
    expect(await startsOf(project.startedFile)).toBe(0);

    expect(await answer(client, approval, 'always')).toEqual({ applied: true });
    await waitFor(() => hasTool(server, worker, 'fixture_echo'), { what: 'the fixture tools after approval' });
    expect(await startsOf(project.startedFile)).toBe(1);
    expect((await server.permissions.readText(worker.workerId)).text).toContain('"mcp.server"');
    const audit = await readFile(join(project.dataDir, 'audit', 'approvals.jsonl'), 'utf8');
    expect(audit).toMatch(/"tool":"mcp\.server".*"decision":"approved".*"scope":"always"/);

    await worker.close();
    const again = await project.startWorker();
    await waitFor(() => hasTool(server, again, 'fixture_echo'), { what: 'the fixture tools after a restart' });
    expect(await startsOf(project.startedFile)).toBe(2);
    expect(watch.requested()).toHaveLength(1);
  });

  it('asks again when the definition of an approved server changes, even by one env value', async () => {
    await using project = await startProject();
    const { server, client } = project;
    using watch = watchApprovals(client);
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker();
    await waitFor(() => watch.requested().length === 1);
    await answer(client, watch.requested()[0], 'always');
    await waitFor(() => hasTool(server, worker, 'fixture_echo'));

    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile, { MODE: 'changed' }) });
    await waitFor(() => watch.requested().length === 2, { what: 'a new approval for the changed definition' });
    const [before, after] = watch.requested();
    expect(after?.subjects[0]?.label).not.toBe(before?.subjects[0]?.label);
    await waitFor(() => !hasTool(server, worker, 'fixture_echo'), { what: 'the old tools to go' });
    expect(statusOf(worker, 'fixture')).toBe('awaiting approval');
    expect(await startsOf(project.startedFile)).toBe(1);

    await answer(client, after, 'once');
    await waitFor(() => hasTool(server, worker, 'fixture_echo'));
    expect(await startsOf(project.startedFile)).toBe(2);
  });

  it('keeps a denied server stopped, even across reloads, until its definition changes', async () => {
    await using project = await startProject();
    const { server, client } = project;
    using watch = watchApprovals(client);
    const other = join(project.workdir, 'other-starts.log');
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker();
    await waitFor(() => watch.requested().length === 1);
    const denied = watch.requested()[0];
    await client.rpc.approvals.deny.mutate({
      sessionId: denied?.sessionId ?? '',
      approvalId: denied?.approvalId ?? '',
    });
    await waitFor(() => statusOf(worker, 'fixture') === 'denied', { what: 'the denied status' });

    // A reload that adds another server asks about that one only.
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile), other: fixture(other) });
    await waitFor(() => watch.requested().length === 2, { what: 'the approval of the added server' });
    expect(watch.requested()[1]?.subjects[0]?.label).toMatch(/^other: /);
    await answer(client, watch.requested()[1], 'once');
    await waitFor(() => hasTool(server, worker, 'other_echo'));
    expect(statusOf(worker, 'fixture')).toBe('denied');
    expect(hasTool(server, worker, 'fixture_echo')).toBe(false);
    expect(await startsOf(project.startedFile)).toBe(0);

    await writeMcpJson(project.workdir, {
      fixture: fixture(project.startedFile, { MODE: 'fixed' }),
      other: fixture(other),
    });
    await waitFor(() => watch.requested().length === 3, { what: 'a new approval for the changed definition' });
    expect(watch.requested()[2]?.subjects[0]?.label).toMatch(/^fixture: /);
  });

  it('starts a waiting server once a rule that allows it is saved, and refuses one a saved rule denies', async () => {
    await using project = await startProject();
    const { server, client } = project;
    using watch = watchApprovals(client);
    const other = join(project.workdir, 'other-starts.log');
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile), other: fixture(other) });
    const worker = await project.startWorker();
    await waitFor(() => watch.requested().length === 2);
    const pattern = watch.requested().find((approval) => approval.args.name === 'fixture')?.alwaysPatterns?.[0];
    expect(pattern).toBeDefined();

    const shown = await client.rpc.permissions.show.query({ workerId: worker.workerId });
    await client.rpc.permissions.write.mutate({
      workerId: worker.workerId,
      text: JSON.stringify({ '*': 'ask', 'mcp.server': { [pattern ?? '']: 'allow', 'other: *': 'deny' } }),
      baseVersion: shown.version,
    });
    await waitFor(() => hasTool(server, worker, 'fixture_echo'), { what: 'the allowed server to start' });
    await waitFor(() => statusOf(worker, 'other') === 'denied', { what: 'the denied server' });
    expect(await startsOf(other)).toBe(0);
    expect(watch.resolved().map((event) => [event.outcome, event.by.startsWith('rule: ')])).toEqual(
      expect.arrayContaining([
        ['approved', true],
        ['denied', true],
      ]),
    );
  });

  it('withdraws the question when the waiting server is removed from .mcp.json', async () => {
    await using project = await startProject();
    using watch = watchApprovals(project.client);
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker();
    await waitFor(() => watch.requested().length === 1);
    await writeMcpJson(project.workdir, {});
    await waitFor(() => watch.resolved().length === 1, { what: 'the approval to be withdrawn' });
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'cancelled' });
    expect(project.server.gate.pending()).toEqual([]);
    expect(worker.mcpServers()).toEqual([]);
  });

  it('does not ask again when an approved server crashes and is started again', async () => {
    await using project = await startProject();
    const { server, client } = project;
    using watch = watchApprovals(client);
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker();
    await waitFor(() => watch.requested().length === 1);
    await answer(client, watch.requested()[0], 'once');
    await waitFor(() => hasTool(server, worker, 'fixture_crash'));
    // Ungated: the crash tool is called the way the person's own `molf mcp call` would.
    const crashed = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'fixture_crash',
      args: {},
    });
    expect(crashed.meta?.errorKind).not.toBe('tool_not_found');
    await waitForStarts(project.startedFile, 2);
    await waitFor(() => statusOf(worker, 'fixture') === 'connected', { what: 'the reconnect' });
    expect(watch.requested()).toHaveLength(1);
  });

  it('asks again after the link dropped and the server denied the waiting question as offline', async () => {
    await using project = await startProject();
    const { server, client } = project;
    using watch = watchApprovals(client);
    await using proxy = await startTcpProxy({ host: server.host, port: server.port });
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker({ serverUrl: proxy.url });
    await waitFor(() => server.gate.pending().length === 1, { what: 'the approval' });

    proxy.cut();
    await waitFor(() => watch.resolved().length === 1, { what: "the offline worker's approval to be denied" });
    proxy.restore();
    await waitFor(() => watch.requested().length === 2, { what: 'the approval asked again after the reconnect' });
    expect(statusOf(worker, 'fixture')).toBe('awaiting approval');
    await answer(client, watch.requested()[1], 'once');
    await waitFor(() => hasTool(server, worker, 'fixture_echo'), { what: 'the fixture tools' });
    expect(await startsOf(project.startedFile)).toBe(1);
  });

  it('asks once when the worker sends its request again over a new link before the server noticed the old one died', async () => {
    const logs: string[] = [];
    await using project = await startProject({ logs });
    const { server, client } = project;
    using watch = watchApprovals(client);
    await using proxy = await startTcpProxy({ host: server.host, port: server.port });
    await writeMcpJson(project.workdir, { fixture: fixture(project.startedFile) });
    const worker = await project.startWorker({
      serverUrl: proxy.url,
      keepAlive: { intervalMs: 100, pongTimeoutMs: 200 },
    });
    await waitFor(() => server.gate.pending().length === 1, { what: 'the approval' });

    // A half-open link: the worker gives up on it and registers anew; the server still waits on the old one.
    proxy.freeze();
    await waitFor(() => worker.stats().registrations >= 2, { what: 'the worker to register again' });
    const joined = () => logs.some((line) => line.includes('approval request joined the one waiting'));
    await waitFor(() => joined() || watch.requested().length > 1, { what: 'the repeated request to reach the server' });
    expect(watch.requested()).toHaveLength(1);
    expect(server.gate.pending()).toHaveLength(1);
    await answer(client, watch.requested()[0], 'once');
    await waitFor(() => hasTool(server, worker, 'fixture_echo'), { what: 'the fixture tools' });
    expect(await startsOf(project.startedFile)).toBe(1);
  });
});
