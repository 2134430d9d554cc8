import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { isProcessAlive } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { follow, newSession, startStack } from '../testing/agent-stack.ts';
import { defaultRulesAllowingEdits } from '../testing/default-rules-allowing-edits.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import { TEST_CLIENT_TOKEN, waitFor } from '../testing/test-link.ts';
import type { ServerTool } from '../tools/index.ts';

describe('agent loop through the fake LLM and a real worker', () => {
  it('streams a text answer, stores the prompt and the answer, and sends system, history and tools to the model', async () => {
    await using stack = await startStack({ turns: [{ text: ['Hello', ', ', 'world.'] }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    const { queued } = await stack.client.rpc.sessions.prompt.mutate({
      sessionId: session.sessionId,
      text: 'Say hello',
    });
    expect(queued).toBe(false);
    await watch.turnEnded();
    // The idle status follows the turn's end (with a database, each event reaches clients once stored).
    // (The session's title may come before or after it.)
    await waitFor(
      () => {
        const types = watch.types();
        return types.slice(types.lastIndexOf('turn.ended')).includes('status');
      },
      { what: 'the idle status after the turn' },
    );

    // Deltas that arrive in one tick are published as one event: the chunks may come merged. The
    // session's title comes in its own time (session-titler.test.ts).
    const types = watch.types().filter((type) => type !== 'session.renamed');
    expect(types.filter((type, index) => type !== 'message.delta' || types[index - 1] !== type)).toEqual([
      'status',
      'turn.started',
      'message.delta',
      'message.completed',
      'turn.ended',
      'status',
    ]);
    expect(watch.events.flatMap((event) => (event.type === 'message.delta' ? [event.text] : [])).join('')).toBe(
      'Hello, world.',
    );
    expect(watch.events.map((event) => event.seq)).toEqual(watch.events.map((_event, index) => index + 1));
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    const { messages, session: stored } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages).toMatchObject([
      { role: 'user', text: 'Say hello' },
      {
        role: 'assistant',
        text: 'Hello, world.',
        toolCalls: [],
        model: 'fake/test-model',
        usage: { inputTokens: 10, outputTokens: 5 },
      },
    ]);
    expect(stored.messageCount).toBe(2);

    const [request] = stack.llm.requests;
    expect(request?.model).toBe('test-model');
    expect(request?.messages[0]).toMatchObject({ role: 'system' });
    expect(String(request?.messages[0]?.content)).toContain(stack.link.workdir);
    expect(request?.messages.at(-1)).toEqual({ role: 'user', content: 'Say hello' });
    // The worker's six tools and the server's task and cron tools; no skill tool: the worker has none.
    expect(request?.tools.map((entry) => entry.function.name).sort()).toEqual(
      ['cron', 'edit_file', 'glob', 'grep', 'read_file', 'shell_exec', 'task', 'write_file'].sort(),
    );
  });

  it('runs an allowed tool call on the worker and feeds its real result back to the model', async () => {
    await using stack = await startStack({
      turns: [
        { toolCalls: [{ id: 'call_read', name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'The file says hi.' },
      ],
    });
    await writeFile(join(stack.link.workdir, 'notes.txt'), 'hi from the worker\n');
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Read notes.txt' });
    await watch.turnEnded();

    const ended = watch.events.find((event) => event.type === 'tool-call.ended');
    expect(ended).toMatchObject({ toolName: 'read_file', toolCallId: 'call_read', truncated: false });
    expect(ended?.type === 'tool-call.ended' && ended.output).toContain('hi from the worker');
    const toolMessage = stack.llm.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: 'call_read' });
    expect(String(toolMessage?.content)).toContain('hi from the worker');
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('puts AGENTS.md in the system prompt, and nested AGENTS.md after the first read_file below it', async () => {
    await using stack = await startStack({
      turns: [
        { toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'pkg/a.txt' } }] },
        { toolCalls: [{ id: 'r2', name: 'read_file', arguments: { path: 'pkg/b.txt' } }] },
        { text: 'read both' },
      ],
    });
    const { workdir } = stack.link;
    await writeFile(join(workdir, 'AGENTS.md'), 'Root rule: run the tests before you finish.\n');
    await mkdir(join(workdir, 'pkg'));
    await writeFile(join(workdir, 'pkg', 'AGENTS.md'), 'Package rule: keep pkg free of dependencies.\n');
    await writeFile(join(workdir, 'pkg', 'a.txt'), 'A\n');
    await writeFile(join(workdir, 'pkg', 'b.txt'), 'B\n');
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'read' });
    await watch.turnEnded();

    const system = String(stack.llm.requests[0]?.messages[0]?.content);
    expect(system).toContain('Project instructions from AGENTS.md');
    expect(system).toContain('Root rule: run the tests before you finish.');
    expect(system).not.toContain('Package rule');
    const toolContents = (stack.llm.requests[2]?.messages ?? [])
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    expect(toolContents[0]).toContain(
      '[Instructions from pkg/AGENTS.md]\nPackage rule: keep pkg free of dependencies.',
    );
    expect(toolContents[1]).not.toContain('Package rule');
  });

  it('shows the model old large tool results trimmed while the session keeps them whole', async () => {
    const read = (id: string) => ({ toolCalls: [{ id, name: 'read_file', arguments: { path: `${id}.txt` } }] });
    await using stack = await startStack({
      agent: { contextTokens: 20_000 },
      turns: [read('r1'), read('r2'), read('r3'), read('r4'), { text: 'done' }],
    });
    for (const id of ['r1', 'r2', 'r3', 'r4']) {
      await writeFile(join(stack.link.workdir, `${id}.txt`), 'a line of words in a big file\n'.repeat(600));
    }
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'read a lot' });
    await watch.turnEnded();
    const last = stack.llm.requests.at(-1)?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(String(last[0]?.content)).toContain('of this old tool result cut to save context');
    expect(String(last[3]?.content)).not.toContain('cut to save context');
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    const stored = messages.flatMap((message) => (message.role === 'tool' ? [message.output] : []));
    expect(stored[0]).not.toContain('cut to save context');
    expect(stored[0]?.length).toBeGreaterThan(15_000);
  });

  it('summarises older turns near the context limit and keeps the last four turns in full', async () => {
    const summaryText = `Goal: answer five questions. Progress: questions one to five were answered. ${'Details. '.repeat(20)}`;
    await using stack = await startStack({
      agent: { contextTokens: 1_000 },
      turns: [
        { text: 'answer 1' },
        { text: 'answer 2' },
        { text: 'answer 3' },
        { text: 'answer 4' },
        { text: 'answer 5', usage: { promptTokens: 900, completionTokens: 5 } },
        { text: summaryText },
        { text: 'answer 6' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    for (let index = 1; index <= 5; index += 1) {
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: `question ${index}` });
      await watch.turnEnded(index);
    }
    await waitFor(() => watch.types().includes('context.compacted'), { what: 'the summary' });
    expect(stack.llm.requests[5]?.stream).toBe(false);
    expect(JSON.stringify(stack.llm.requests[5]?.messages)).toContain('USER: question 1');
    expect(JSON.stringify(stack.llm.requests[5]?.messages)).not.toContain('question 2');

    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'question 6' });
    await watch.turnEnded(6);
    const seen = stack.llm.requests[6]?.messages.slice(1).map((message) => String(message.content)) ?? [];
    expect(seen[0]).toContain('[Summary of the earlier conversation');
    expect(seen[0]).toContain('Goal: answer five questions.');
    expect(seen.slice(2)).toEqual([
      'question 2',
      'answer 2',
      'question 3',
      'answer 3',
      'question 4',
      'answer 4',
      'question 5',
      'answer 5',
      'question 6',
    ]);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.some((message) => message.role === 'user' && message.text === 'question 1')).toBe(true);
  });

  it('retries once with old content pruned when the provider says the request is too long', async () => {
    const read = (id: string) => ({ toolCalls: [{ id, name: 'read_file', arguments: { path: `${id}.txt` } }] });
    await using stack = await startStack({
      turns: [
        read('f1'),
        read('f2'),
        read('f3'),
        read('f4'),
        { error: { status: 400, message: "This model's maximum context length is 8192 tokens" } },
        { text: 'fits now' },
      ],
    });
    for (const id of ['f1', 'f2', 'f3', 'f4'])
      await writeFile(join(stack.link.workdir, `${id}.txt`), `content of ${id}\n`);
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'read them all' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    expect(watch.types()).not.toContain('error');
    const retried = stack.llm.requests[5]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(String(retried[0]?.content)).toContain('Old tool result content cleared');
    expect(String(stack.llm.requests[4]?.messages.filter((message) => message.role === 'tool')[0]?.content)).toContain(
      'content of f1',
    );
  });

  it('sends a tool error to the model with its real text', async () => {
    await using stack = await startStack({
      // Edits allowed: the call must reach the worker and fail there.
      permissions: defaultRulesAllowingEdits(),
      turns: [
        { toolCalls: [{ name: 'edit_file', arguments: { path: 'missing.txt', oldString: 'a', newString: 'b' } }] },
        { text: 'ok' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'edit' });
    await watch.turnEnded();
    const toolMessage = stack.llm.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolMessage?.content)).toMatch(/missing\.txt/);
    expect(String(toolMessage?.content)).not.toContain('cancelled');
    expect(watch.types()).not.toContain('error');
  });

  it('refuses a tool call whose arguments are not JSON, tells the model why, and goes on', async () => {
    await using stack = await startStack({
      turns: [
        {
          toolCalls: [
            { name: 'read_file', arguments: '{"path": "a.txt"' },
            { name: 'read_file', arguments: '' },
          ],
        },
        { text: 'fixed' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'read' });
    await watch.turnEnded();
    const toolMessages = stack.llm.requests[1]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(toolMessages).toHaveLength(2);
    // Neither ran: the broken text is no object, the empty arguments lack the path; the model hears each.
    expect(String(toolMessages[0]?.content)).toBe('The arguments must be a JSON object.');
    expect(String(toolMessages[1]?.content)).toMatch(/^Invalid arguments for read_file:[\s\S]*at path/);
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
  });

  it('retries a request the provider failed with a 5xx once, then answers', async () => {
    await using stack = await startStack({
      turns: [{ error: { status: 503, message: 'overloaded' } }, { text: 'after one retry' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'hello' });
    await watch.turnEnded();
    expect(stack.llm.requests).toHaveLength(2);
    expect(watch.types()).not.toContain('error');
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', text: 'after one retry' });
  });

  it('asks before a shell command; approve runs it, deny sends the feedback to the model', async () => {
    await using stack = await startStack({
      turns: [
        { toolCalls: [{ id: 'call_ok', name: 'shell_exec', arguments: { command: 'echo approved-run' } }] },
        { toolCalls: [{ id: 'call_no', name: 'shell_exec', arguments: { command: 'touch nope.txt' } }] },
        { text: 'Understood.' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'go' });

    const requested = () => watch.events.filter((event) => event.type === 'approval.requested');
    await waitFor(() => requested().length === 1, { what: 'the first approval' });
    const first = requested()[0];
    if (first?.type !== 'approval.requested') throw new Error('no approval');
    await stack.client.rpc.approvals.approve.mutate({
      sessionId: session.sessionId,
      approvalId: first.approval.approvalId,
    });
    await waitFor(() => requested().length === 2, { what: 'the second approval' });
    const second = requested()[1];
    if (second?.type !== 'approval.requested') throw new Error('no approval');
    await stack.client.rpc.approvals.deny.mutate({
      sessionId: session.sessionId,
      approvalId: second.approval.approvalId,
      feedback: 'do not create files',
    });
    await watch.turnEnded();

    const toolMessages = stack.llm.requests[2]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(String(toolMessages[0]?.content)).toContain('approved-run');
    expect(String(toolMessages[1]?.content)).toContain('do not create files');
    await expect(readFile(join(stack.link.workdir, 'nope.txt'))).rejects.toThrow();
    expect(watch.types().filter((type) => type === 'approval.resolved')).toHaveLength(2);
  });

  it('runs the tool calls of one step in parallel', async () => {
    await using stack = await startStack({
      permissions: '{ "*": "ask", "shell_exec": "allow" }',
      turns: [
        {
          toolCalls: [
            {
              name: 'shell_exec',
              arguments: { command: 'while [ ! -f b.flag ]; do sleep 0.05; done; touch a.flag; echo a' },
            },
            {
              name: 'shell_exec',
              arguments: { command: 'touch b.flag; while [ ! -f a.flag ]; do sleep 0.05; done; echo b' },
            },
          ],
        },
        { text: 'both done' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'both' });
    // Each command waits for the other's flag: run one after the other, they would never finish.
    await watch.turnEnded();
    const outputs = watch.events.flatMap((event) =>
      event.type === 'tool-call.ended' ? [event.output.split('\n')[0]] : [],
    );
    expect(outputs.sort()).toEqual(['a', 'b']);
  });

  it('aborts a long shell_exec: the process is gone, the history stays valid and the next prompt works', async () => {
    await using stack = await startStack({
      permissions: '{ "*": "ask", "shell_exec": "allow" }',
      turns: [
        { toolCalls: [{ id: 'call_long', name: 'shell_exec', arguments: { command: 'echo $$ > pid.txt; sleep 30' } }] },
        { text: 'after the abort' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'long' });
    const pidFile = join(stack.link.workdir, 'pid.txt');
    await waitFor(() => watch.types().includes('tool-call.started'));
    let pid = Number.NaN;
    await waitFor(
      () => {
        pid = Number.parseInt(String(requireText(pidFile)), 10);
        return Number.isInteger(pid);
      },
      { what: 'the shell to start' },
    );
    expect(await stack.client.rpc.sessions.abort.mutate({ sessionId: session.sessionId })).toEqual({ aborted: true });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'aborted' });
    await waitFor(() => !isProcessAlive(pid), { what: 'the shell process to be gone' });

    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(messages[2]).toMatchObject({ role: 'tool', toolCallId: 'call_long', errorKind: 'cancelled' });

    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'again' });
    await watch.turnEnded(2);
    const last = stack.llm.requests.at(-1);
    expect(last?.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
    expect(last?.messages.at(-1)).toEqual({ role: 'user', content: 'again' });
  });

  it('warns the model at the third identical tool call and ends the turn when it repeats it again', async () => {
    const same = { toolCalls: [{ name: 'glob', arguments: { pattern: '*.none' } }] };
    await using stack = await startStack({ turns: [same, same, same, same, { text: 'never reached' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'loop' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'doom_loop' });
    expect(watch.events.find((event) => event.type === 'error')).toMatchObject({ code: 'doom_loop' });
    expect(stack.llm.requests).toHaveLength(4);
    const toolResults = stack.llm.requests[3]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(String(toolResults[2]?.content)).toContain('You appear to be repeating the same action');
    expect(String(toolResults[1]?.content)).not.toContain('repeating');
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.at(-1)).toMatchObject({ role: 'tool', errorKind: 'cancelled' });
    expect(stack.llm.remaining()).toBe(1);
  });

  it('warns each run of identical calls once: a later run of other identical calls is warned, not ended', async () => {
    const call = (pattern: string) => ({ toolCalls: [{ name: 'glob', arguments: { pattern } }] });
    const runA = [call('*.a'), call('*.a'), call('*.a')];
    const runB = [call('*.b'), call('*.b'), call('*.b')];
    await using stack = await startStack({ turns: [...runA, ...runB, { text: 'done looking' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'look around' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    expect(watch.events.filter((event) => event.type === 'error')).toEqual([]);
    const toolResults = stack.llm.requests.at(-1)?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(toolResults.map((message) => String(message.content).includes('repeating the same action'))).toEqual([
      false,
      false,
      true,
      false,
      false,
      true,
    ]);
  });

  it("offers the server's own tools beside the worker's and feeds a server tool's result to the model", async () => {
    const clock: ServerTool = {
      definition: {
        name: 'clock',
        description: 'Tells the time in a zone.',
        args: z.object({ zone: z.string() }),
        defaultTimeoutMs: 10_000,
      },
      run: async (args) => ({ output: `noon in ${(args as { zone: string }).zone}` }),
    };
    await using stack = await startStack({
      serverTools: [clock],
      permissions: '{ "*": "ask", "clock": "allow" }',
      turns: [
        { toolCalls: [{ id: 'call_clock', name: 'clock', arguments: { zone: 'UTC' } }] },
        { text: 'It is noon.' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'What time is it?' });
    await watch.turnEnded();
    const [first, second] = stack.llm.requests;
    expect(first?.tools.map((entry) => entry.function.name)).toContain('clock');
    expect(first?.tools.map((entry) => entry.function.name)).toContain('read_file');
    expect(second?.messages.find((message) => message.role === 'tool')?.content).toContain('noon in UTC');
    expect(watch.events.find((event) => event.type === 'tool-call.ended')).toMatchObject({
      toolName: 'clock',
      output: 'noon in UTC',
    });
  });

  it('shows the model an image read_file returned, in a user message after the results, stored beside the history', async () => {
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('a tiny picture')]);
    await using stack = await startStack({
      turns: [
        { toolCalls: [{ id: 'call_img', name: 'read_file', arguments: { path: 'logo.png' } }] },
        { text: 'A logo.' },
      ],
    });
    await writeFile(join(stack.link.workdir, 'logo.png'), png);
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'What is in logo.png?' });
    await watch.turnEnded();

    const messages = stack.llm.requests[1]?.messages ?? [];
    const toolIndex = messages.findIndex((message) => message.role === 'tool');
    expect(String(messages[toolIndex]?.content)).toContain('follows in the next message');
    expect(messages[toolIndex + 1]).toMatchObject({
      role: 'user',
      content: [
        { type: 'text', text: 'Attachments of the tool results above:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
      ],
    });
    // Stored by content beside the history, not inside it.
    const sha256 = createHash('sha256').update(png).digest('hex');
    const { sessions } = stack.link.server;
    expect(Buffer.from((await sessions.readAttachment(session.sessionId, sha256)) ?? [])).toEqual(png);
    expect(JSON.stringify(await sessions.messages(session.sessionId))).not.toContain(png.toString('base64'));
    const { messages: stored } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(stored.find((message) => message.role === 'tool')).toMatchObject({
      attachments: [{ sha256, mimeType: 'image/png', size: png.length }],
    });
  });

  it('tells a text-only model plainly that an image was not shown', async () => {
    await using stack = await startStack({
      attachments: { fake: 'none' },
      turns: [
        { toolCalls: [{ id: 'call_img', name: 'read_file', arguments: { path: 'logo.png' } }] },
        { text: 'I cannot see it.' },
      ],
    });
    await writeFile(join(stack.link.workdir, 'logo.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Look at logo.png' });
    await watch.turnEnded();
    const messages = stack.llm.requests[1]?.messages ?? [];
    const tool = messages.find((message) => message.role === 'tool');
    expect(String(tool?.content)).toMatch(
      /an image \(image\/png, 8 bytes, logo\.png\) that this model cannot see; it was not shown/,
    );
    expect(messages.filter((message) => message.role === 'user')).toHaveLength(1);
  });

  it('gives a client that reconnects mid-turn every event exactly once', async () => {
    const chunks = Array.from({ length: 30 }, (_, index) => `w${index} `);
    await using stack = await startStack({ turns: [{ text: chunks, chunkDelayMs: 20 }] });
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
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'stream slowly' });
      await waitFor(() => received.filter((event) => event.type === 'message.delta').length >= 5);
      proxy.cut();
      // Events keep coming on the server while the link is down; the client must get them later.
      const deltasBefore = received.length;
      await waitFor(async () => (await stack.link.server.sessions.get(session.sessionId))?.messageCount === 2, {
        what: 'the answer to finish while the client is cut off',
      });
      expect(received.length).toBe(deltasBefore);
      proxy.restore();
      await waitFor(() => received.some((event) => event.type === 'turn.ended'), {
        what: 'the end after the reconnect',
      });
      await waitFor(() => received.at(-1)?.type === 'status');
    } finally {
      subscription.unsubscribe();
    }
    const seqs = received.map((event) => event.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
    const text = received.flatMap((event) => (event.type === 'message.delta' ? [event.text] : [])).join('');
    expect(text).toBe(chunks.join(''));
  });

  it('queues prompts sent while busy and runs them in order', async () => {
    await using stack = await startStack({
      turns: [{ text: ['slow ', 'one'], chunkDelayMs: 100 }, { text: 'two' }, { text: 'three' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    const answers = [];
    for (const text of ['first', 'second', 'third']) {
      answers.push(await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text }));
    }
    expect(answers.map((answer) => answer.queued)).toEqual([false, true, true]);
    await watch.turnEnded(3);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => (message.role === 'tool' ? '' : message.text))).toEqual([
      'first',
      'slow one',
      'second',
      'two',
      'third',
      'three',
    ]);
    expect(watch.types().filter((type) => type === 'message.queued')).toHaveLength(2);
  });

  it('reports a provider error as an event, keeps the session usable, and answers the next prompt', async () => {
    // A 400 is not retried (a 5xx is, once).
    await using stack = await startStack({
      turns: [{ error: { status: 400, message: 'bad request: context too long' } }, { text: 'recovered' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'one' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'error')).toMatchObject({
      code: 'provider_error',
      message: expect.stringContaining('context too long'),
    });
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'error' });
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'two' });
    await watch.turnEnded(2);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => (message.role === 'tool' ? '' : message.text))).toEqual([
      'one',
      'two',
      'recovered',
    ]);
  });

  it('fails a stalled or broken model stream with an error event, keeping what arrived, and stays usable', async () => {
    await using stack = await startStack({
      agent: { streamIdleTimeoutMs: 300 },
      turns: [
        { text: ['partial ', 'never'], stallAfterChunks: 2 },
        { text: ['cut ', 'off'], breakAfterChunks: 2 },
        { text: 'fine again' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    for (const [index, text] of ['one', 'two', 'three'].entries()) {
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text });
      await watch.turnEnded(index + 1);
    }
    const ends = watch.events.flatMap((event) => (event.type === 'turn.ended' ? [event.reason] : []));
    expect(ends).toEqual(['error', 'error', 'completed']);
    expect(
      watch.events.filter((event) => event.type === 'error').map((event) => event.type === 'error' && event.code),
    ).toEqual(['provider_error', 'provider_error']);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => (message.role === 'tool' ? '' : message.text))).toEqual([
      'one',
      'partial ',
      'two',
      'cut ',
      'three',
      'fine again',
    ]);
    expect(messages[1]).toMatchObject({ role: 'assistant', interrupted: true });
  });

  it('refuses a prompt for a worker that is offline with an error event, and a prompt that is too large', async () => {
    await using stack = await startStack({ turns: [{ text: 'unused' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.link.worker.close();
    await waitFor(() => stack.link.server.registry.get(stack.link.worker.workerId)?.state === 'offline');
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'hello?' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'error')).toMatchObject({ code: 'worker_offline' });
    expect(stack.llm.requests).toHaveLength(0);
    await expect(
      stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'x'.repeat(200_001) }),
    ).rejects.toMatchObject({ data: { code: 'invalid_input', field: 'text' } });
  });

  it('answers the next prompt after a crash left a tool call without its result', async () => {
    await using stack = await startStack({ turns: [{ text: 'carrying on' }] });
    const session = await newSession(stack);
    const at = new Date().toISOString();
    // What a kill -9 between a call and its result leaves behind (written, on a database, as the
    // holder of the session's lease that then died).
    await stack.link.server.leases?.claim(session.sessionId);
    await stack.link.server.sessions.append(session.sessionId, { id: 'u0', at, role: 'user', text: 'do it' });
    await stack.link.server.sessions.append(session.sessionId, {
      id: 'a0',
      at,
      role: 'assistant',
      text: '',
      toolCalls: [{ toolCallId: 'call_lost', toolName: 'shell_exec', args: { command: 'make' } }],
      model: 'fake/test-model',
    });
    await stack.link.server.leases?.release(session.sessionId);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'and now?' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
    const tool = stack.llm.requests[0]?.messages.find((message) => message.role === 'tool');
    expect(tool).toMatchObject({ tool_call_id: 'call_lost' });
    expect(String(tool?.content)).toContain('the server stopped before it finished');
  });

  it('runs a prompt sent while an aborted turn winds down', async () => {
    await using stack = await startStack({
      turns: [{ text: ['slow', 'never'], stallAfterChunks: 2 }, { text: 'second answer' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'first' });
    await waitFor(() => watch.types().includes('message.delta'));
    expect(await stack.client.rpc.sessions.abort.mutate({ sessionId: session.sessionId })).toEqual({ aborted: true });
    // Sent at once, while the aborted turn may still be winding down: it must run, not vanish.
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'second' });
    await watch.turnEnded(2);
    expect(
      watch.events
        .filter((event) => event.type === 'turn.ended')
        .map((event) => event.type === 'turn.ended' && event.reason),
    ).toEqual(['aborted', 'completed']);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => (message.role === 'tool' ? '' : message.text)).slice(-2)).toEqual([
      'second',
      'second answer',
    ]);
  });

  it('reports a turn timeout as an error, not as an abort by the user', async () => {
    await using stack = await startStack({
      agent: { turnTimeoutMs: 300 },
      turns: [{ text: ['never ends'], stallAfterChunks: 1 }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'x' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'error')).toMatchObject({ code: 'timeout' });
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'error' });
  });

  it('stops a turn at the step limit with an error event, and refuses prompts beyond the queue bound', async () => {
    const step = { toolCalls: [{ name: 'glob', arguments: { pattern: '*.a' } }] };
    const other = { toolCalls: [{ name: 'glob', arguments: { pattern: '*.b' } }] };
    await using stack = await startStack({
      agent: { maxSteps: 2, maxQueue: 1 },
      turns: [step, other, { text: ['queued ', 'answer'], chunkDelayMs: 50 }, { text: 'unused' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'loop on' });
    await watch.turnEnded();
    expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'step_limit' });
    expect(watch.events.find((event) => event.type === 'error')).toMatchObject({ code: 'step_limit' });
    expect(stack.llm.requests).toHaveLength(2);

    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'slow one' });
    expect(
      (await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'waits' })).queued,
    ).toBe(true);
    await expect(
      stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'too many' }),
    ).rejects.toMatchObject({
      data: { code: 'busy' },
    });
  });

  it('renames and deletes sessions; a deleted session is gone for every call', async () => {
    await using stack = await startStack();
    const session = await newSession(stack);
    const renamed = await stack.client.rpc.sessions.rename.mutate({
      sessionId: session.sessionId,
      name: 'Refactor the parser',
    });
    expect(renamed.name).toBe('Refactor the parser');
    expect((await stack.client.rpc.sessions.list.query({ name: 'parser' })).sessions).toHaveLength(1);
    await stack.client.rpc.sessions.delete.mutate({ sessionId: session.sessionId });
    await expect(stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).rejects.toMatchObject({
      data: { code: 'session_not_found' },
    });
    expect((await stack.client.rpc.sessions.list.query({})).total).toBe(0);
  });

  it('refuses session names and ids with control characters (NUL…) as bad input, on every store', async () => {
    await using stack = await startStack();
    const session = await newSession(stack);
    const { rpc } = stack.client;
    const workerId = stack.link.worker.workerId;
    const calls = [
      () => rpc.sessions.create.mutate({ workerId, name: 'a\u0000b' }),
      () => rpc.sessions.rename.mutate({ sessionId: session.sessionId, name: 'two\nlines' }),
      () => rpc.sessions.list.query({ name: '\u0000' }),
      () => rpc.sessions.get.query({ sessionId: 'id\u0000' }),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject({ data: { code: 'invalid_input' } });
    // Nothing was made or changed.
    expect((await rpc.sessions.list.query({})).sessions.map((listed) => listed.sessionId)).toEqual([session.sessionId]);
  });

  it('gives a session’s history in pages from its end, each tool result with its call, and refuses a bad range', async () => {
    await using stack = await startStack({
      turns: [{ toolCalls: [{ id: 'g1', name: 'glob', arguments: { pattern: '*' } }] }, { text: 'Done.' }],
      permissions: '{ "*": "ask", "glob": "allow" }',
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'List files' });
    await watch.turnEnded();
    const get = (range: { limit?: number; before?: number }) =>
      stack.client.rpc.sessions.get.query({ sessionId: session.sessionId, ...range });
    const roles = (page: Awaited<ReturnType<typeof get>>) => page.messages.map((message) => message.role);

    const whole = await get({});
    expect(roles(whole)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(whole).toMatchObject({ start: 0, total: 4 });
    // The last two would start with the glob result: the page starts at its call instead.
    const last = await get({ limit: 2 });
    expect(roles(last)).toEqual(['assistant', 'tool', 'assistant']);
    expect(last).toMatchObject({ start: 1, total: 4 });
    const older = await get({ limit: 2, before: last.start });
    expect(older.messages).toEqual(whole.messages.slice(0, 1));
    expect(older.start).toBe(0);

    for (const range of [{ limit: 0 }, { limit: -1 }, { before: -1 }, { limit: 1.5 }]) {
      await expect(get(range)).rejects.toMatchObject({ data: { code: 'invalid_input' } });
    }
  });

  it('says what to set when no model is configured, without calling any provider', async () => {
    await using stack = await startStack({ defaultModel: null });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'hi' });
    await watch.turnEnded();
    const error = watch.events.find((event) => event.type === 'error');
    expect(error).toMatchObject({ code: 'model_not_configured' });
    expect(error?.type === 'error' && error.message).toContain('--model');
    expect(stack.llm.requests).toHaveLength(0);
    await expect(
      stack.client.rpc.sessions.prompt.mutate({ sessionId: 'no-such-session', text: 'hi' }),
    ).rejects.toMatchObject({ data: { code: 'session_not_found' } });
  });
});

function requireText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
