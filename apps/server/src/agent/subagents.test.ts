import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { isProcessAlive } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { follow, newSession, type Stack, startStack, toolMessages } from '../testing/agent-stack.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import { TEST_CLIENT_TOKEN, waitFor } from '../testing/test-link.ts';

/** Rules for these tests: task and files allowed, shell commands as each test needs. */
function permissions(shell: 'allow' | 'ask' = 'allow'): string {
  return JSON.stringify({
    '*': 'ask',
    read_file: 'allow',
    write_file: 'allow',
    glob: 'allow',
    grep: 'allow',
    shell_exec: shell,
    task: 'allow',
  });
}

type Wrapped = Extract<SessionEvent, { type: 'subagent.event' }>;

function wrapped(events: readonly SessionEvent[]): Wrapped[] {
  return events.filter((event): event is Wrapped => event.type === 'subagent.event');
}

function taskCall(id: string, agent: string, prompt: string) {
  return { id, name: 'task', arguments: { agent, description: `job ${id}`, prompt } };
}

describe('subagents: the task tool through the fake LLM and a real worker', () => {
  it('runs explore in a child session whose write_file is denied by the agent layer, though the worker allows it', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_task', 'explore', 'CHILD-EXPLORE: write notes.txt')] },
        {
          match: 'CHILD-EXPLORE',
          toolCalls: [{ id: 'call_w', name: 'write_file', arguments: { path: 'notes.txt', content: 'x' } }],
        },
        { match: 'CHILD-EXPLORE', text: 'I may not write files.' },
        { text: 'The explorer could not write.' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'delegate' });
    await watch.turnEnded();

    expect(existsSync(join(stack.link.workdir, 'notes.txt'))).toBe(false);
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({ output: expect.stringContaining('I may not write files.') });
    expect(result?.role === 'tool' && result.error).toBeUndefined();

    const { sessions } = await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId });
    expect(sessions).toHaveLength(1);
    const child = sessions[0];
    // The child names the parent's task call by the id its messages and events carry.
    expect(child?.parent).toEqual({ sessionId: session.sessionId, toolCallId: 'call_task', agent: 'explore' });
    // A list of top-level sessions leaves the child out: it is reached through its parent's task call.
    const topLevel = await stack.client.rpc.sessions.list.query({ topLevel: true });
    expect(topLevel).toMatchObject({ total: 1, sessions: [{ sessionId: session.sessionId }] });
    await expect(
      stack.client.rpc.sessions.list.query({ topLevel: true, parentSessionId: session.sessionId }),
    ).rejects.toMatchObject({ data: { code: 'invalid_input', field: 'topLevel' } });
    const [denied] = await toolMessages(stack, child?.sessionId ?? '', 'write_file');
    expect(denied).toMatchObject({
      errorKind: 'permission_denied',
      error: expect.stringContaining('the explore agent may not use write_file'),
    });

    // The child was offered only the read-only tools; the parent also the task tool.
    const childRequest = stack.llm.requests.find((request) =>
      JSON.stringify(request.messages).includes('CHILD-EXPLORE'),
    );
    expect(childRequest?.tools.map((entry) => entry.function.name).sort()).toEqual(['glob', 'grep', 'read_file']);
    expect(String(childRequest?.messages[0]?.content)).toContain('subagent "explore"');
    expect(stack.llm.requests[0]?.tools.map((entry) => entry.function.name)).toContain('task');

    // The child's events are in the parent's stream, wrapped, in the child's order.
    const inner = wrapped(watch.events).map((event) => event.event);
    expect(inner.map((event) => event.seq)).toEqual(inner.map((_event, index) => index + 1));
    expect(inner.map((event) => event.type)).toContain('tool-call.ended');
    expect(wrapped(watch.events).every((event) => event.childSessionId === child?.sessionId)).toBe(true);
    expect(new Set(wrapped(watch.events).map((event) => event.toolCallId))).toEqual(new Set(['call_task']));
    expect(watch.events.find((event) => event.type === 'tool-call.started')).toMatchObject({ toolCallId: 'call_task' });
    expect(watch.events.map((event) => event.seq)).toEqual(watch.events.map((_event, index) => index + 1));
  });

  it('runs two task calls of one step at the same time', async () => {
    // Each child waits for a file the other writes: run one after the other, neither could finish.
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_a', 'general', 'PAR-A'), taskCall('call_b', 'general', 'PAR-B')] },
        {
          match: 'PAR-A',
          toolCalls: [
            {
              name: 'shell_exec',
              arguments: { command: 'touch a-started; while [ ! -f b-started ]; do sleep 0.05; done; echo A-done' },
            },
          ],
        },
        {
          match: 'PAR-B',
          toolCalls: [
            {
              name: 'shell_exec',
              arguments: { command: 'touch b-started; while [ ! -f a-started ]; do sleep 0.05; done; echo B-done' },
            },
          ],
        },
        { match: 'A-done', text: 'answer A' },
        { match: 'B-done', text: 'answer B' },
        { text: 'both done' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'two at once' });
    await watch.turnEnded();
    const results = await toolMessages(stack, session.sessionId, 'task');
    expect(results.map((result) => (result.role === 'tool' ? result.output : '')).join('\n')).toMatch(
      /answer A[\s\S]*answer B|answer B[\s\S]*answer A/,
    );
    expect(results.every((result) => result.role === 'tool' && result.error === undefined)).toBe(true);
    const { total } = await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId });
    expect(total).toBe(2);
  });

  it('runs no more task calls at once than the limit: the others wait their turn', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      agent: { maxParallelTasks: 1 },
      turns: [
        { toolCalls: [taskCall('call_a', 'general', 'SEQ-A'), taskCall('call_b', 'general', 'SEQ-B')] },
        { match: 'SEQ-A', text: ['answer ', 'A'], chunkDelayMs: 50 },
        { match: 'SEQ-B', text: 'answer B' },
        { text: 'done' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'one at a time' });
    await watch.turnEnded();
    const order = wrapped(watch.events)
      .filter((event) => event.event.type === 'turn.started' || event.event.type === 'turn.ended')
      .map(
        (event) =>
          `${event.toolCallId === wrapped(watch.events)[0]?.toolCallId ? 'first' : 'second'}:${event.event.type}`,
      );
    expect(order).toEqual(['first:turn.started', 'first:turn.ended', 'second:turn.started', 'second:turn.ended']);
  });

  it("shows a child's approval to a second client following the parent, and that client's answer applies", async () => {
    await using stack = await startStack({
      permissions: permissions('ask'),
      turns: [
        { toolCalls: [taskCall('call_task', 'general', 'CHILD-ASK')] },
        { match: 'CHILD-ASK', toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo approved-run' } }] },
        { match: 'approved-run', text: 'it ran' },
        { text: 'parent done' },
      ],
    });
    const session = await newSession(stack);
    await using second = createMolfClient({ url: stack.link.server.url, token: TEST_CLIENT_TOKEN });
    await second.ready();
    using watch = follow(second, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'ask inside' });
    await waitFor(() => wrapped(watch.events).some((event) => event.event.type === 'approval.requested'), {
      what: "the child's approval in the parent's stream",
    });
    const request = wrapped(watch.events).find((event) => event.event.type === 'approval.requested')?.event;
    if (request?.type !== 'approval.requested') throw new Error('no approval');
    expect(request.approval).toMatchObject({
      tool: 'shell_exec',
      subagent: { agent: 'general', parentSessionId: session.sessionId },
    });
    expect(request.approval.sessionId).not.toBe(session.sessionId);
    await second.rpc.approvals.approve.mutate({
      sessionId: request.approval.sessionId,
      approvalId: request.approval.approvalId,
      scope: 'once',
    });
    await watch.turnEnded();
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({ output: expect.stringContaining('it ran') });
  });

  it("kills a child's running shell command when the parent turn is aborted", async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_task', 'general', 'CHILD-SLEEP')] },
        {
          match: 'CHILD-SLEEP',
          toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo $$ > child.pid; exec sleep 300' } }],
        },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'sleep in a child' });
    const pidFile = join(stack.link.workdir, 'child.pid');
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '', {
      what: "the child's command to start",
    });
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(isProcessAlive(pid)).toBe(true);
    await stack.client.rpc.sessions.abort.mutate({ sessionId: session.sessionId });
    await waitFor(() => !isProcessAlive(pid), { what: "the child's sleep to be killed" });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'aborted' });
    const childEnd = wrapped(watch.events).find((event) => event.event.type === 'turn.ended')?.event;
    expect(childEnd).toMatchObject({ reason: 'aborted' });
  });

  it('lets a person abort one running subagent alone, and refuses prompts to a subagent session', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_task', 'general', 'CHILD-STOP')] },
        {
          match: 'CHILD-STOP',
          toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo $$ > stop.pid; exec sleep 300' } }],
        },
        { text: 'the parent goes on' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'stop the child' });
    const pidFile = join(stack.link.workdir, 'stop.pid');
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '', {
      what: "the child's command to start",
    });
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    const { sessions } = await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId });
    const childId = sessions[0]?.sessionId ?? '';
    await expect(stack.client.rpc.sessions.prompt.mutate({ sessionId: childId, text: 'do more' })).rejects.toThrow(
      /subagent's session of session .*: it can be read, not prompted/,
    );
    expect(await stack.client.rpc.sessions.abort.mutate({ sessionId: childId })).toEqual({ aborted: true });
    await waitFor(() => !isProcessAlive(pid), { what: "the child's sleep to be killed" });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({
      errorKind: 'cancelled',
      error: 'The general subagent was stopped before it finished.',
    });
  });

  it('stops a child at the time limit and gives the parent a clear timeout error', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      agent: { taskTimeoutMs: 3_000 },
      turns: [
        { toolCalls: [taskCall('call_task', 'general', 'CHILD-SLOW')] },
        {
          match: 'CHILD-SLOW',
          toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo $$ > slow.pid; exec sleep 300' } }],
        },
        { text: 'the task timed out' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'too slow' });
    await watch.turnEnded();
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({
      errorKind: 'timeout',
      error: expect.stringMatching(/general subagent did not finish within 3 s and was stopped/),
    });
    const pidText = await readFile(join(stack.link.workdir, 'slow.pid'), 'utf8').catch(() => '');
    if (pidText.trim() !== '') {
      const pid = Number(pidText.trim());
      await waitFor(() => !isProcessAlive(pid), { what: "the timed-out child's command to be killed" });
    }
    const childEnd = wrapped(watch.events).find((event) => event.event.type === 'turn.ended')?.event;
    expect(childEnd).toMatchObject({ reason: 'aborted' });
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
  });

  it("asks before a task by default, naming the agent; runs the child on the parent turn's model; deleting the parent deletes the child", async () => {
    await using stack = await startStack({
      turns: [
        { toolCalls: [taskCall('call_task', 'explore', 'CHILD-MODEL')] },
        { match: 'CHILD-MODEL', text: 'found it' },
        { text: 'ok' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({
      sessionId: session.sessionId,
      text: 'delegate',
      model: 'fake/parent-model',
    });
    await waitFor(() => watch.events.some((event) => event.type === 'approval.requested'), { what: 'the task to ask' });
    const asked = watch.events.find((event) => event.type === 'approval.requested');
    if (asked?.type !== 'approval.requested') throw new Error('no approval');
    expect(asked.approval).toMatchObject({ tool: 'task', subjects: [{ kind: 'name', label: 'explore' }] });
    await stack.client.rpc.approvals.approve.mutate({
      sessionId: session.sessionId,
      approvalId: asked.approval.approvalId,
      scope: 'once',
    });
    await watch.turnEnded();
    const childRequest = stack.llm.requests.find((request) => JSON.stringify(request.messages).includes('CHILD-MODEL'));
    expect(childRequest?.model).toBe('parent-model');

    const { total } = await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId });
    expect(total).toBe(1);
    await stack.client.rpc.sessions.delete.mutate({ sessionId: session.sessionId });
    const after = await stack.client.rpc.sessions.list.query({});
    expect(after.total).toBe(0);
  });

  it('tells the model about an unknown agent, naming the agents there are', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [{ toolCalls: [taskCall('call_task', 'nobody', 'x')] }, { text: 'ok' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'unknown agent' });
    await watch.turnEnded();
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({
      errorKind: 'invalid_arguments',
      error: 'There is no agent named "nobody". The agents are: explore, general.',
    });
  });

  it('gives a client that resumes the parent mid-task every wrapped event exactly once', async () => {
    const chunks = Array.from({ length: 30 }, (_, index) => `c${index} `);
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_task', 'general', 'CHILD-STREAM')] },
        { match: 'CHILD-STREAM', text: chunks, chunkDelayMs: 20 },
        { text: 'parent done' },
      ],
    });
    const session = await newSession(stack);
    await using proxy = await startTcpProxy({ host: stack.link.server.host, port: stack.link.server.port });
    await using flaky = createMolfClient({ url: proxy.url, token: TEST_CLIENT_TOKEN, retryDelayMs: () => 50 });
    await flaky.ready();
    const received: SessionEvent[] = [];
    const subscription = flaky.rpc.sessions.events.subscribe(
      { sessionId: session.sessionId },
      { onData: (envelope) => received.push(envelope.data) },
    );
    try {
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'stream in a child' });
      await waitFor(() => wrapped(received).filter((event) => event.event.type === 'message.delta').length >= 3, {
        what: "the child's first deltas",
      });
      proxy.cut();
      await waitFor(() => stack.link.server.agent.busy(session.sessionId) === false, {
        what: 'the parent turn to end while the client is cut off',
      });
      proxy.restore();
      await waitFor(() => received.some((event) => event.type === 'turn.ended'), {
        what: 'the end after the reconnect',
      });
      await waitFor(() => received.at(-1)?.type === 'status');
    } finally {
      subscription.unsubscribe();
    }
    expect(received.map((event) => event.seq)).toEqual(received.map((_event, index) => index + 1));
    const inner = wrapped(received).map((event) => event.event);
    expect(inner.map((event) => event.seq)).toEqual(inner.map((_event, index) => index + 1));
    const text = inner.flatMap((event) => (event.type === 'message.delta' ? [event.text] : [])).join('');
    expect(text).toBe(chunks.join(''));
  });
});

describe("subagents: the project's own agents", () => {
  async function writeAgent(stack: Stack, name: string, text: string) {
    const dir = join(stack.link.workdir, '.agents', 'agents');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.md`), text);
  }

  async function agentsOnServer(stack: Stack) {
    const [worker] = await stack.client.rpc.workers.list.query();
    return worker?.catalog;
  }

  it("runs a project agent with its prompt, tools and rules; its rules narrow the worker's", async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_task', 'reviewer', 'CHILD-REVIEW')] },
        {
          match: 'CHILD-REVIEW',
          toolCalls: [
            { id: 'r1', name: 'read_file', arguments: { path: 'secret/key.txt' } },
            { id: 'r2', name: 'read_file', arguments: { path: 'notes.md' } },
          ],
        },
        { match: 'CHILD-REVIEW', text: 'reviewed' },
        { text: 'done' },
      ],
    });
    await mkdir(join(stack.link.workdir, 'secret'), { recursive: true });
    await writeFile(join(stack.link.workdir, 'secret', 'key.txt'), 'k');
    await writeFile(join(stack.link.workdir, 'notes.md'), 'notes');
    await writeAgent(
      stack,
      'reviewer',
      [
        '---',
        'description: Reviews code without touching it',
        'tools: [read_file, grep]',
        'permission:',
        '  read_file:',
        '    "secret/*": deny',
        'maxSteps: 5',
        '---',
        'You review code. REVIEWER-PROMPT',
      ].join('\n'),
    );
    await waitFor(
      async () => (await agentsOnServer(stack))?.agents.some((agent) => agent.name === 'reviewer') === true,
      {
        what: 'the agent to reach the server',
      },
    );
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'review' });
    await watch.turnEnded();
    const childRequest = stack.llm.requests.find((request) =>
      JSON.stringify(request.messages).includes('CHILD-REVIEW'),
    );
    expect(String(childRequest?.messages[0]?.content)).toContain('REVIEWER-PROMPT');
    expect(childRequest?.tools.map((entry) => entry.function.name).sort()).toEqual(['grep', 'read_file']);
    const { sessions } = await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId });
    const reads = await toolMessages(stack, sessions[0]?.sessionId ?? '', 'read_file');
    expect(reads.find((message) => message.role === 'tool' && message.toolCallId === 'r1')).toMatchObject({
      errorKind: 'permission_denied',
      error: expect.stringContaining("reviewer agent's permissions"),
    });
    expect(reads.find((message) => message.role === 'tool' && message.toolCallId === 'r2')).toMatchObject({
      output: expect.stringContaining('notes'),
    });
  });

  it('returns what a child had when it reaches its step limit, with a note', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [
        { toolCalls: [taskCall('call_task', 'brief', 'CHILD-LIMIT')] },
        {
          match: 'CHILD-LIMIT',
          text: 'partial finding',
          toolCalls: [{ name: 'glob', arguments: { pattern: '*.md' } }],
        },
        { text: 'parent saw the note' },
      ],
    });
    await writeAgent(stack, 'brief', '---\ndescription: One step only\nmaxSteps: 1\n---\nBe brief.');
    await waitFor(async () => (await agentsOnServer(stack))?.agents.some((agent) => agent.name === 'brief') === true, {
      what: 'the agent to reach the server',
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'limit' });
    await watch.turnEnded();
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({
      output: expect.stringMatching(/partial finding[\s\S]*reached its limit of 1 model steps/),
    });
    expect(result?.role === 'tool' && result.error).toBeUndefined();
  });

  it('reports an agent naming an unknown tool or model, and a task with that model fails with the reason', async () => {
    await using stack = await startStack({
      permissions: permissions(),
      turns: [{ toolCalls: [taskCall('call_task', 'odd', 'CHILD-ODD')] }, { text: 'ok' }],
    });
    await writeAgent(
      stack,
      'odd',
      '---\ndescription: Names things that are not there\ntools: [read_file, teleport]\nmodel: nowhere/model-x\n---\nOdd.',
    );
    await waitFor(async () => (await agentsOnServer(stack))?.agents.some((agent) => agent.name === 'odd') === true, {
      what: 'the agent to reach the server',
    });
    const catalog = await agentsOnServer(stack);
    expect(catalog?.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: '.agents/agents/odd.md', message: expect.stringContaining('teleport') }),
        expect.objectContaining({ path: '.agents/agents/odd.md', message: expect.stringContaining('nowhere/model-x') }),
      ]),
    );
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'odd' });
    await watch.turnEnded();
    const [result] = await toolMessages(stack, session.sessionId, 'task');
    expect(result).toMatchObject({ error: expect.stringContaining('nowhere') });
  });
});
