import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { FIXTURE_MCP_SERVER, startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import {
  approveMcpServerStarts,
  createTempDir,
  FAST_RECONNECT,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';

describe('MCP tools end to end', () => {
  it('offers an MCP tool to the model; the gate asks, the user approves, the result reaches the model', async () => {
    await using llm = await startFakeLlm({
      turns: [
        { toolCalls: [{ id: 'call_mcp', name: 'fixture_echo', arguments: { text: 'through MCP' } }] },
        { text: 'The MCP server said it.' },
      ],
    });
    await using data = await createTempDir();
    await using project = await createTempDir();
    await writeFile(
      join(project.path, '.mcp.json'),
      JSON.stringify({
        mcpServers: { fixture: { type: 'stdio', command: process.execPath, args: [FIXTURE_MCP_SERVER] } },
      }),
    );
    await using server = await startTestServer({
      dataDir: data.path,
      models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
    });
    const worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: project.path });
    try {
      await worker.registered;
      await approveMcpServerStarts(server, worker.workerId);
      await waitFor(() => server.registry.get(worker.workerId)?.tools.includes('fixture_echo') === true, {
        what: 'the MCP tools to reach the server',
      });
      expect(worker.mcpServers()).toMatchObject([{ name: 'fixture', status: 'connected' }]);

      await using client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
      await client.ready();
      const session = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const events: SessionEvent[] = [];
      const subscription = client.rpc.sessions.events.subscribe(
        { sessionId: session.sessionId },
        { onData: (envelope) => events.push(envelope.data) },
      );
      try {
        await client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'use the MCP tool' });
        await waitFor(() => events.some((event) => event.type === 'approval.requested'), { what: 'the approval' });
        const requested = events.find((event) => event.type === 'approval.requested');
        if (requested?.type !== 'approval.requested') throw new Error('no approval');
        expect(requested.approval).toMatchObject({ tool: 'fixture_echo', alwaysPatterns: ['*'] });
        await client.rpc.approvals.approve.mutate({
          sessionId: session.sessionId,
          approvalId: requested.approval.approvalId,
          scope: 'always',
        });
        await waitFor(() => events.some((event) => event.type === 'turn.ended'), { what: 'the end of the turn' });
      } finally {
        subscription.unsubscribe();
      }
      const offered = llm.requests[0]?.tools.find((tool) => tool.function.name === 'fixture_echo');
      expect(offered?.function.description).toBe('[fixture] Echo the text back');
      expect(offered?.function.parameters).toMatchObject({ properties: { text: { type: 'string' } } });
      const toolMessage = llm.requests[1]?.messages.find((message) => message.role === 'tool');
      expect(toolMessage).toMatchObject({ tool_call_id: 'call_mcp', content: 'through MCP' });
      // "Always" saved the whole tool as a grant.
      expect((await server.permissions.readText(worker.workerId)).text).toMatch(
        /"fixture_echo": \{\s*"\*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}\s*\}/,
      );
    } finally {
      await worker.close();
    }
  });

  it('keeps the MCP tools on the server after the worker reconnects', async () => {
    await using data = await createTempDir();
    await using project = await createTempDir();
    await writeFile(
      join(project.path, '.mcp.json'),
      JSON.stringify({
        mcpServers: { fixture: { type: 'stdio', command: process.execPath, args: [FIXTURE_MCP_SERVER] } },
      }),
    );
    await using server = await startTestServer({ dataDir: data.path });
    await using proxy = await startTcpProxy({ host: server.host, port: server.port });
    const worker = await createWorker({
      serverUrl: proxy.url,
      token: TEST_WORKER_TOKEN,
      workdir: project.path,
      reconnect: FAST_RECONNECT,
    });
    try {
      await worker.registered;
      await approveMcpServerStarts(server, worker.workerId);
      const hasMcpTools = () => server.registry.get(worker.workerId)?.tools.includes('fixture_echo') === true;
      await waitFor(hasMcpTools, { what: 'the MCP tools to reach the server' });
      proxy.cut();
      await waitFor(() => server.registry.get(worker.workerId)?.state === 'offline', { what: 'the worker to drop' });
      proxy.restore();
      await waitFor(() => worker.stats().registrations >= 2, { what: 'the worker to register again' });
      await waitFor(hasMcpTools, { what: 'the MCP tools after the reconnect' });
      expect(server.registry.registration(worker.workerId)?.tools.map((tool) => tool.name)).toContain('fixture_echo');
    } finally {
      await worker.close();
    }
  });
});
