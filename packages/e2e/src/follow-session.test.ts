import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient as createPlatformClient } from '@molf/client';
import { createMolfClient, followSession, type SessionState } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { createServer } from '@molf/server';
import { startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';

const TOKENS = { client: 'molf_c_e2e-client-token-0123456789', worker: 'molf_w_e2e-worker-token-0123456789' };

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function startStack() {
  const root = await mkdtemp(join(tmpdir(), 'molf-e2e-'));
  const llm = await startFakeLlm();
  const server = await createServer({
    port: 0,
    dataDir: join(root, 'data'),
    tokens: TOKENS,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
  });
  const worker = await createWorker({ serverUrl: server.url, token: TOKENS.worker, workdir: root });
  await worker.registered;
  const client = createMolfClient({ url: server.url, token: TOKENS.client });
  await client.ready();
  return {
    llm,
    server,
    worker,
    client,
    async [Symbol.asyncDispose]() {
      try {
        await client.close();
        await worker.close();
        await server.close();
        await llm.close();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

describe('following a session with the shared client', () => {
  it('starts with what is already there: a running turn and the approval it waits for', async () => {
    await using stack = await startStack();
    stack.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'touch made-by-agent' } }] });
    stack.llm.push({ text: 'done' });
    const { sessionId } = await stack.client.rpc.sessions.create.mutate({ workerId: stack.worker.workerId });
    await stack.client.rpc.sessions.prompt.mutate({ sessionId, text: 'make a file' });
    await until(() => stack.server.gate.pending({ sessionId }).length === 1, 'the shell call to ask');

    const seen: SessionEvent[] = [];
    let backfilled: SessionState | undefined;
    const follower = followSession(stack.client, {
      sessionId,
      onEvent: (event) => seen.push(event),
      onBackfill: (state) => {
        backfilled = state;
      },
    });
    try {
      await until(() => backfilled !== undefined, 'the backfill');
      expect(follower.state().busy).toBe(true);
      expect(follower.state().approvals.map((approval) => approval.tool)).toEqual(['shell_exec']);
      // The approval names the call as the session's events do, so a client can mark the card that waits.
      expect(follower.state().approvals[0]?.sessionToolCallId).toBe('c1');
      // Answered elsewhere: the follower sees it resolved and the turn end.
      const [approval] = follower.state().approvals;
      await stack.client.rpc.approvals.deny.mutate({ sessionId, approvalId: approval?.approvalId ?? '' });
      await until(() => seen.some((event) => event.type === 'turn.ended'), 'the turn to end');
      await until(() => !follower.state().busy, 'the session to be idle');
      expect(follower.state().approvals).toEqual([]);
      expect(seen.map((event) => event.type)).toContain('approval.resolved');
    } finally {
      follower.stop();
    }
  });

  it("shows the worker's own approvals (an MCP server start) when asked to follow its worker", async () => {
    await using stack = await startStack();
    const { sessionId } = await stack.client.rpc.sessions.create.mutate({ workerId: stack.worker.workerId });
    const follower = followSession(stack.client, { sessionId, workerId: stack.worker.workerId, onEvent: () => {} });
    try {
      // The gate asks about a server start on the worker's behalf, outside any session.
      const asked = stack.server.gate.check({
        sessionId: `worker:${stack.worker.workerId}`,
        workerId: stack.worker.workerId,
        toolCallId: 'mcp-start',
        tool: 'mcp_server',
        args: { name: 'github' },
        kind: 'mcp_server',
      });
      await until(() => follower.state().approvals.length === 1, 'the MCP start to show');
      expect(follower.state().approvals[0]?.kind).toBe('mcp_server');
      const [approval] = follower.state().approvals;
      await stack.client.rpc.approvals.deny.mutate({
        sessionId: approval?.sessionId ?? '',
        approvalId: approval?.approvalId ?? '',
      });
      expect((await asked).type).toBe('deny');
      await until(() => follower.state().approvals.length === 0, 'the MCP start to be resolved');
    } finally {
      follower.stop();
    }
  });
});

describe('the client core with the platform WebSocket (no ws), as a browser runs it', () => {
  it('connects, calls the server with types, and reports a refused token', async () => {
    await using stack = await startStack();
    await using core = createPlatformClient({ url: stack.server.url, token: TOKENS.client });
    expect(await core.ready({ timeoutMs: 60_000 })).toMatchObject({ role: 'admin' });
    const { sessionId } = await core.rpc.sessions.create.mutate({ workerId: stack.worker.workerId });
    expect((await core.rpc.sessions.get.query({ sessionId })).session.sessionId).toBe(sessionId);

    await using refused = createPlatformClient({
      url: stack.server.url,
      token: 'molf_c_not-a-token-this-server-knows-0123',
      stopWhenRefused: true,
    });
    await expect(refused.ready({ timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'unauthorized' });
  });
});
