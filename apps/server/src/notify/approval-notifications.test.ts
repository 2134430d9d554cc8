import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import type { SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { requestMcpServerStart } from '../approvals/index.ts';
import { follow, newSession, type Stack, startStack } from '../testing/agent-stack.ts';
import { type ReceivedRequest, startHttpReceiver } from '../testing/http-receiver.ts';
import { waitFor } from '../testing/test-link.ts';
import type { NotifyOptions } from './notify-settings.ts';

/** A session a person named (a session created without a name is titled from its first prompt). */
function namedSession(stack: Stack) {
  return stack.client.rpc.sessions.create.mutate({ workerId: stack.link.worker.workerId, name: 'nightly checks' });
}

/** A fake LLM script: one shell call that asks (the default rules ask for `touch`), then an answer. */
const ONE_CALL = [
  { toolCalls: [{ id: 'call_touch', name: 'shell_exec', arguments: { command: 'touch linked.txt && echo done' } }] },
  { text: 'Finished.' },
];

type Links = { approve: string; deny: string };

/** The approve and deny URLs of an ntfy message's `Actions` header. */
function ntfyLinks(request: ReceivedRequest): Links {
  const actions = String(request.headers.actions).split('; ');
  const urlOf = (label: string) => {
    const fields = actions.map((action) => action.split(', ')).find((parts) => parts[1] === label);
    expect(fields?.[0]).toBe('http');
    expect(fields?.slice(3)).toEqual(['method=POST', 'clear=true']);
    return fields?.[2] ?? '';
  };
  return { approve: urlOf('Approve'), deny: urlOf('Deny') };
}

function webhookLinks(request: ReceivedRequest): Links & { expiresAt: string } {
  return (JSON.parse(request.body) as { links: Links & { expiresAt: string } }).links;
}

/** Follows a link as the ntfy app's `http` action does: a POST with an empty body. */
function post(url: string): Promise<Response> {
  return fetch(url, { method: 'POST' });
}

async function prompt(stack: Stack, sessionId: string): Promise<void> {
  await stack.client.rpc.sessions.prompt.mutate({ sessionId, text: 'go' });
}

async function auditRecords(stack: Stack): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(join(stack.link.server.dataDir, 'audit', 'approvals.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function resolvedEvents(events: SessionEvent[]) {
  return events.flatMap((event) => (event.type === 'approval.resolved' ? [event] : []));
}

/**
 * The call of ONE_CALL asked through a webhook target: the stack, the session, its events and the
 * links of the approval. Disposing it stops the stack, then the receiver.
 */
async function askThroughWebhook(notify: Partial<NotifyOptions> = {}) {
  const receiver = await startHttpReceiver();
  try {
    const stack = await startStack({
      turns: ONE_CALL,
      notify: { ...notify, targets: [{ type: 'webhook', url: receiver.url }] },
    });
    const session = await newSession(stack);
    const watch = follow(stack.client, session.sessionId);
    await prompt(stack, session.sessionId);
    await waitFor(() => receiver.requests.length === 1, { what: 'the webhook call' });
    return {
      stack,
      session,
      watch,
      links: webhookLinks(receiver.requests[0] as ReceivedRequest),
      async [Symbol.asyncDispose]() {
        watch[Symbol.dispose]();
        try {
          await stack[Symbol.asyncDispose]();
        } finally {
          await receiver[Symbol.asyncDispose]();
        }
      },
    };
  } catch (error) {
    await receiver[Symbol.asyncDispose]();
    throw error;
  }
}

describe('approval notifications with one-time links', () => {
  it('sends an ntfy message whose Approve button runs the call, recorded as answered by that link', async () => {
    await using receiver = await startHttpReceiver();
    await using stack = await startStack({
      turns: ONE_CALL,
      notify: { targets: [{ type: 'ntfy', url: `${receiver.url}/molf-approvals`, token: 'tk_secret-ntfy-token' }] },
    });
    // Named by a person: the name the message shows is not replaced by a title from the prompt.
    const session = await namedSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await prompt(stack, session.sessionId);
    await waitFor(() => receiver.requests.length === 1, { what: 'the ntfy message' });
    const [message] = receiver.requests;
    if (message === undefined) throw new Error('no message');

    expect(message).toMatchObject({ method: 'POST', path: '/molf-approvals' });
    expect(message.headers).toMatchObject({
      title: `Approve shell_exec on ${stack.link.worker.name}?`,
      priority: 'high',
      tags: 'robot,question',
      authorization: 'Bearer tk_secret-ntfy-token',
    });
    expect(message.body.split('\n')[0]).toBe('$ touch linked.txt && echo done');
    expect(message.body).toContain('asks: touch linked.txt');
    expect(message.body).toContain(`session "${session.name}" (${session.sessionId})`);
    const links = ntfyLinks(message);
    expect(links.approve.startsWith(`${stack.link.server.httpUrl}/approval-links/`)).toBe(true);

    const response = await post(links.approve);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Approved once');
    await watch.turnEnded();

    const toolResult = stack.llm.requests[1]?.messages.find((entry) => entry.role === 'tool');
    expect(String(toolResult?.content)).toContain('done');
    const [resolved] = resolvedEvents(watch.events);
    expect(resolved).toMatchObject({
      outcome: 'approved',
      scope: 'once',
      by: expect.stringMatching(/^link:[\w-]{8}$/),
    });
    await waitFor(async () => (await auditRecords(stack)).some((record) => record.decision === 'approved'), {
      what: 'the audit record',
    });
    const record = (await auditRecords(stack)).find((entry) => entry.decision === 'approved');
    expect(record).toMatchObject({ tool: 'shell_exec', by: resolved?.by, sessionId: session.sessionId });
    expect(record).not.toHaveProperty('connectionId');
  });

  it("sends the webhook's JSON; its deny link refuses the call, and neither link answers again", async () => {
    await using receiver = await startHttpReceiver();
    await using stack = await startStack({
      turns: ONE_CALL,
      notify: { targets: [{ type: 'webhook', url: `${receiver.url}/hook`, headers: { 'X-Hook-Secret': 's3cret' } }] },
    });
    const session = await namedSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await prompt(stack, session.sessionId);
    await waitFor(() => receiver.requests.length === 1, { what: 'the webhook call' });
    const [hook] = receiver.requests;
    if (hook === undefined) throw new Error('no webhook call');
    expect(hook.headers).toMatchObject({ 'content-type': 'application/json', 'x-hook-secret': 's3cret' });
    const payload = JSON.parse(hook.body) as Record<string, unknown>;
    expect(payload).toMatchObject({
      type: 'approval.requested',
      approval: {
        tool: 'shell_exec',
        args: { command: 'touch linked.txt && echo done' },
        sessionId: session.sessionId,
      },
      worker: { workerId: stack.link.worker.workerId, name: stack.link.worker.name },
      session: { sessionId: session.sessionId, name: session.name },
      links: { approve: expect.any(String), deny: expect.any(String), expiresAt: expect.any(String) },
    });
    const links = webhookLinks(hook);

    const denied = await post(links.deny);
    expect(denied.status).toBe(200);
    expect(await denied.text()).toContain('Denied');
    await watch.turnEnded();
    const toolResult = stack.llm.requests[1]?.messages.find((entry) => entry.role === 'tool');
    expect(String(toolResult?.content)).toContain('The user denied this shell_exec call');
    await expect(readFile(join(stack.link.workdir, 'linked.txt'))).rejects.toThrow();
    expect(resolvedEvents(watch.events)).toMatchObject([{ outcome: 'denied', by: expect.stringMatching(/^link:/) }]);

    const again = await post(links.deny);
    expect(again.status).toBe(410);
    expect(await again.text()).toContain('already used');
    const approveAfter = await post(links.approve);
    expect(approveAfter.status).toBe(410);
    expect(await approveAfter.text()).toContain('already answered');
  });

  it('shows a confirm page on GET without answering; after a client answers, the link is gone (410)', async () => {
    await using asked = await askThroughWebhook();
    const { stack, session, watch, links } = asked;

    // What a link preview or a mail scanner does: it must not answer.
    const page = await fetch(links.approve);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<form method="post">');
    expect(html).toContain('touch linked.txt &amp;&amp; echo done');
    expect(html).not.toContain(new URL(links.approve).pathname.split('/').pop());
    expect(html).not.toMatch(/<script|src=|href=/);
    const [approval] = stack.link.server.gate.pending({ sessionId: session.sessionId });
    expect(approval).toBeDefined();

    await stack.client.rpc.approvals.approve.mutate({
      sessionId: session.sessionId,
      approvalId: approval?.approvalId ?? '',
    });
    await watch.turnEnded();
    const late = await post(links.approve);
    expect(late.status).toBe(410);
    expect(await late.text()).toContain('already answered in another client');
    expect(resolvedEvents(watch.events)).toMatchObject([{ by: expect.stringMatching(/^client:/) }]);
  });

  it('refuses an expired link with 410 and leaves the approval waiting', async () => {
    let skewMs = 0;
    await using asked = await askThroughWebhook({ linkTtlMinutes: 5, now: () => Date.now() + skewMs });
    const { stack, session, watch, links } = asked;
    expect(Date.parse(links.expiresAt) - Date.now()).toBeGreaterThan(4 * 60_000);

    skewMs = 5 * 60_000 + 1_000;
    const expired = await post(links.approve);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain('expired');
    expect((await fetch(links.deny)).status).toBe(410);
    expect(stack.link.server.gate.pending({ sessionId: session.sessionId })).toHaveLength(1);
    expect(resolvedEvents(watch.events)).toEqual([]);
  });

  it('refuses a tampered or unknown token with the same 404, and a large body with 413', async () => {
    await using asked = await askThroughWebhook();
    const { stack, session, watch } = asked;
    const { deny } = asked.links;

    // A deny link whose claims say approve, with the deny link's signature.
    const [payload = '', signature = ''] = new URL(deny).pathname.split('/').pop()?.split('.') ?? [];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, decision: 'approve' })).toString('base64url');
    const base = `${stack.link.server.httpUrl}/approval-links/`;
    const answers = await Promise.all(
      [`${forged}.${signature}`, 'not-a-token', `${payload}.${'A'.repeat(43)}`].map(async (token) => {
        const response = await post(`${base}${token}`);
        return { status: response.status, text: await response.text() };
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404]);
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);

    const large = await fetch(deny, { method: 'POST', body: 'x'.repeat(100_000) });
    expect(large.status).toBe(413);
    expect(stack.link.server.gate.pending({ sessionId: session.sessionId })).toHaveLength(1);
    // Neither refusal used the real link up.
    expect((await post(deny)).status).toBe(200);
    await watch.turnEnded();
  });

  it('a target that hangs or is down blocks neither the others nor the turn, and is logged by host only', async () => {
    const lines: string[] = [];
    const logger = await createLogger({
      name: 'server',
      console: 'json',
      destination: new Writable({
        write(chunk, _encoding, callback) {
          lines.push(String(chunk));
          callback();
        },
      }),
    });
    await using hanging = await startHttpReceiver({ answer: 'hang' });
    await using broken = await startHttpReceiver({ answer: 500 });
    await using good = await startHttpReceiver();
    // A port where nothing listens any more: connection refused.
    const down = await startHttpReceiver();
    await down[Symbol.asyncDispose]();
    const notify: NotifyOptions = {
      // Long enough that the hanging target is still waiting when the test looks; cut at close.
      timeoutMs: 600_000,
      targets: [
        { type: 'webhook', url: `${hanging.url}/slow`, headers: { authorization: 'Bearer hook-secret-1234567890' } },
        { type: 'webhook', url: `${broken.url}/broken`, headers: { 'x-key': 'hook-secret-abcdef' } },
        { type: 'ntfy', url: `${down.url}/down-topic`, token: 'tk_hook-secret-ntfy' },
        { type: 'ntfy', url: `${good.url}/topic` },
      ],
    };
    await using stack = await startStack({ turns: ONE_CALL, notify, logger });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await prompt(stack, session.sessionId);
    await waitFor(() => good.requests.length === 1 && hanging.requests.length === 1, { what: 'the notifications' });
    const failures = () => lines.filter((line) => line.includes('approval notification failed'));
    await waitFor(() => failures().length === 2, { what: 'the failures in the log' });

    // The hanging target still holds its request; the link from the good one answers at once.
    expect((await post(ntfyLinks(good.requests[0] as ReceivedRequest).approve)).status).toBe(200);
    await watch.turnEnded();

    const logged = failures().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.sort((a, b) => String(a.target).localeCompare(String(b.target)))).toMatchObject([
      { level: 40, target: `ntfy ${new URL(down.url).host}`, error: 'ECONNREFUSED' },
      { level: 40, target: `webhook ${new URL(broken.url).host}`, error: 'HTTP 500' },
    ]);
    const log = lines.join('');
    for (const secret of ['hook-secret', '/broken', '/down-topic', '/approval-links/']) {
      expect(log).not.toContain(secret);
    }
  });

  it("notifies an MCP server start, whose approve link lets the worker's server start", async () => {
    await using receiver = await startHttpReceiver();
    await using stack = await startStack({ notify: { targets: [{ type: 'ntfy', url: receiver.url }] } });
    const { workerId } = stack.link.worker;
    const answer = requestMcpServerStart(stack.link.server.gate, {
      workerId,
      name: 'github',
      definition: { command: 'github-mcp', args: ['--stdio'] },
    });
    await waitFor(() => receiver.requests.length === 1, { what: 'the ntfy message' });
    const message = receiver.requests[0] as ReceivedRequest;
    expect(message.headers.title).toBe(`Approve start MCP server "github" on ${stack.link.worker.name}?`);
    expect(message.body).not.toContain('session');
    expect((await post(ntfyLinks(message).approve)).status).toBe(200);
    await expect(answer).resolves.toEqual({ type: 'allow' });
  });
});
