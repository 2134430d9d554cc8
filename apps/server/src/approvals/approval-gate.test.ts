import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import { readDefaultPermissionsText } from '@molf/permissions/default-file';
import type { ApprovalEvent, ToolResult } from '@molf/protocol';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { defaultRulesAllowingEdits } from '../testing/default-rules-allowing-edits.ts';
import {
  createTempDir,
  startTestLink,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';
import type { GatedToolCall } from '../tools/run-tool-call.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;

function watchApprovals(client: MolfClient, input: { sessionId?: string; workerId?: string } = {}) {
  const events: ApprovalEvent[] = [];
  const subscription = client.rpc.approvals.events.subscribe(input, { onData: (event) => events.push(event) });
  return {
    events,
    requested: () => events.flatMap((event) => (event.type === 'approval.requested' ? [event.approval] : [])),
    resolved: () => events.flatMap((event) => (event.type === 'approval.resolved' ? [event] : [])),
    [Symbol.dispose]: () => subscription.unsubscribe(),
  };
}

function run(
  link: Link,
  call: {
    sessionId: string;
    tool: string;
    args: Record<string, unknown>;
    signal?: AbortSignal;
    unattended?: GatedToolCall['unattended'];
  },
) {
  return link.server.toolCalls.run({ workerId: link.worker.workerId, timeoutMs: 10_000, ...call });
}

async function permissionsText(link: Link): Promise<string> {
  return readFile(link.server.permissions.pathOf(link.worker.workerId), 'utf8');
}

async function writePermissions(link: Link, text: string): Promise<void> {
  const path = link.server.permissions.pathOf(link.worker.workerId);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text);
}

async function clientOf(link: Link): Promise<MolfClient> {
  const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
  await client.ready();
  return client;
}

describe('approval gate', () => {
  it('asks for a shell command, runs it once approved and asks again next time', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    using watch = watchApprovals(client, { sessionId });

    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo approved-once' } });
    await waitFor(() => watch.requested().length === 1, { what: 'approval.requested' });
    const [approval] = watch.requested();
    expect(approval).toMatchObject({
      sessionId,
      workerId: link.worker.workerId,
      tool: 'shell_exec',
      args: { command: 'echo approved-once' },
      alwaysPatterns: ['echo *'],
      subjects: [{ kind: 'command', label: 'echo approved-once', decision: 'ask' }],
    });
    expect(approval?.approvalId.startsWith(`${sessionId}:`)).toBe(true);

    const answer = await client.rpc.approvals.approve.mutate({
      sessionId,
      approvalId: approval?.approvalId ?? '',
      scope: 'once',
    });
    expect(answer).toEqual({ applied: true });
    const result = await call;
    expect(result.output).toContain('approved-once');
    await waitFor(() => watch.resolved().length === 1);
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'approved', scope: 'once', by: 'client:fixed-client' });

    const again = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo approved-once' } });
    await waitFor(() => watch.requested().length === 2, { what: 'a second approval.requested' });
    await client.rpc.approvals.deny.mutate({ sessionId, approvalId: watch.requested()[1]?.approvalId ?? '' });
    expect((await again).meta?.errorKind).toBe('permission_denied');
  });

  it('approves for the session only: the same action runs without asking there, and asks in another session', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    using watch = watchApprovals(client);
    const before = await permissionsText(link).catch(() => undefined);

    const first = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo one' } });
    await waitFor(() => watch.requested().length === 1);
    await client.rpc.approvals.approve.mutate({
      sessionId,
      approvalId: watch.requested()[0]?.approvalId ?? '',
      scope: 'session',
    });
    expect((await first).output).toContain('one');

    expect((await run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo two' } })).output).toContain('two');
    expect(watch.requested()).toHaveLength(1);

    const other = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'echo three' } });
    await waitFor(() => watch.requested().length === 2, { what: 'the other session to ask' });
    expect(await permissionsText(link)).toBe(before ?? readDefaultPermissionsText());
    link.server.gate.close();
    expect((await other).meta?.errorKind).toBe('cancelled');
  });

  it('approves always: the rule is appended to permissions.jsonc with its comments kept, and every session is allowed', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();

    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'git --version' } });
    await waitFor(() => watch.requested().length === 1);
    expect(watch.requested()[0]?.alwaysPatterns).toEqual(['git --version']);
    await client.rpc.approvals.approve.mutate({
      sessionId,
      approvalId: watch.requested()[0]?.approvalId ?? '',
      scope: 'always',
    });
    expect((await call).output).toContain('git version');

    const text = await permissionsText(link);
    expect(text).toContain('// Molf approval rules for one worker.');
    expect(text).toContain('// The LAST matching rule wins');
    expect(text).toMatch(
      /"shell_exec": \{\s*"\*": "ask",\s*"git --version": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}\s*\}/,
    );

    const elsewhere = await run(link, {
      sessionId: randomUUID(),
      tool: 'shell_exec',
      args: { command: 'git --version' },
    });
    expect(elsewhere.output).toContain('git version');
    expect(watch.requested()).toHaveLength(1);

    // Saving the same pattern again adds no duplicate.
    await link.server.permissions.appendAllow(link.worker.workerId, {
      tool: 'shell_exec',
      patterns: ['git --version'],
    });
    expect((await permissionsText(link)).match(/"git --version"/g)).toHaveLength(1);
  });

  it('re-evaluates the other pending approvals of the session after "session" and resolves those now allowed', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();

    const calls = [
      run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo first' } }),
      run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo second' } }),
      run(link, { sessionId, tool: 'shell_exec', args: { command: 'pwd' } }),
    ];
    const otherSession = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'echo third' } });
    await waitFor(() => watch.requested().length === 4, { what: 'four approvals' });
    const first = watch.requested().find((approval) => approval.args.command === 'echo first');
    await client.rpc.approvals.approve.mutate({ sessionId, approvalId: first?.approvalId ?? '', scope: 'session' });

    const [one, two] = await Promise.all(calls.slice(0, 2));
    expect(one?.output).toContain('first');
    expect(two?.output).toContain('second');
    await waitFor(() => watch.resolved().length === 2);
    const cascaded = watch.resolved().find((event) => event.approvalId !== first?.approvalId);
    expect(cascaded).toMatchObject({ outcome: 'approved' });
    expect(cascaded?.by).toMatch(/^rule: allowed by "shell_exec": \{ "echo \*": "allow" \}/);
    // `pwd` and the other session's call still wait.
    expect(
      link.server.gate
        .pending()
        .map((approval) => approval.args.command)
        .sort(),
    ).toEqual(['echo third', 'pwd']);
    link.server.gate.close();
    await Promise.all([calls[2], otherSession]);
  });

  it('sends the user feedback of a denial to the model as the tool result', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'touch created-by-denied-call' } });
    await waitFor(() => watch.requested().length === 1);
    await client.rpc.approvals.deny.mutate({
      sessionId,
      approvalId: watch.requested()[0]?.approvalId ?? '',
      feedback: 'use write_file instead',
    });
    const result: ToolResult = await call;
    expect(result.error).toBe('The user denied this shell_exec call with this feedback: use write_file instead');
    expect(result.meta?.errorKind).toBe('permission_denied');
    await expect(readFile(join(link.workdir, 'created-by-denied-call'))).rejects.toThrow();
    await waitFor(() => watch.resolved().length === 1);
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'denied', reason: 'use write_file instead' });
  });

  it('lets the first of two clients answer; the other gets applied: false and both see approval.resolved', async () => {
    await using link = await startTestLink();
    await using alice = await clientOf(link);
    await using bob = await clientOf(link);
    using aliceWatch = watchApprovals(alice);
    using bobWatch = watchApprovals(bob);
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo raced' } });
    await waitFor(() => aliceWatch.requested().length === 1 && bobWatch.requested().length === 1);
    const approvalId = aliceWatch.requested()[0]?.approvalId ?? '';

    const [approved, denied] = await Promise.all([
      alice.rpc.approvals.approve.mutate({ sessionId, approvalId, scope: 'once' }),
      bob.rpc.approvals.deny.mutate({ sessionId, approvalId, feedback: 'too late' }),
    ]);
    // Either may arrive first; exactly one answer applies, and everyone sees that one.
    expect([approved.applied, denied.applied].filter(Boolean)).toHaveLength(1);
    const result = await call;
    if (approved.applied) expect(result.output).toContain('raced');
    else expect(result.error).toContain('too late');
    await waitFor(() => aliceWatch.resolved().length === 1 && bobWatch.resolved().length === 1);
    expect(bobWatch.resolved()[0]).toMatchObject({ approvalId, outcome: approved.applied ? 'approved' : 'denied' });
    expect(aliceWatch.resolved()).toEqual(bobWatch.resolved());
  });

  it('replays a pending approval to a client that subscribes after it was requested', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo late' } });
    await waitFor(() => link.server.gate.pending().length === 1);

    using late = watchApprovals(client, { sessionId });
    await waitFor(() => late.requested().length === 1, { what: 'the replayed approval' });
    expect(await client.rpc.approvals.list.query({ sessionId })).toHaveLength(1);
    await client.rpc.approvals.approve.mutate({ sessionId, approvalId: late.requested()[0]?.approvalId ?? '' });
    expect((await call).output).toContain('late');
    await waitFor(() => late.resolved().length === 1);
    expect(late.requested()).toHaveLength(1);
  });

  it('refuses an answer that names another session', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo x' } });
    await waitFor(() => link.server.gate.pending().length === 1);
    const approvalId = link.server.gate.pending()[0]?.approvalId ?? '';
    expect(await client.rpc.approvals.approve.mutate({ sessionId: 'another-session', approvalId })).toEqual({
      applied: false,
    });
    expect(link.server.gate.pending()).toHaveLength(1);
    link.server.gate.close();
    await call;
  });

  it('denies by rule with a refusal that names the rule, for the path as written, normalised and through a symlink', async () => {
    await using link = await startTestLink();
    // Writes allowed by rule, as the audit record of an allow is part of what this tells.
    await writePermissions(link, defaultRulesAllowingEdits());
    await writeFile(join(link.workdir, '.env'), 'API_KEY=secret\n');
    await mkdir(join(link.workdir, 'sub'));
    await symlink(join(link.workdir, '.env'), join(link.workdir, 'settings.txt'));
    const sessionId = randomUUID();

    for (const path of ['.env', './sub/../.env', 'settings.txt', join(link.workdir, '.env')]) {
      const result = await run(link, { sessionId, tool: 'read_file', args: { path } });
      expect(result.meta?.errorKind, path).toBe('permission_denied');
      expect(result.error).toContain('"read_file": { "*.env": "deny" } (permissions.jsonc line');
      expect(result.output).toBe('');
    }
    const allowed = await run(link, { sessionId, tool: 'write_file', args: { path: 'notes.md', content: 'ok' } });
    expect(allowed.error).toBeUndefined();

    const audit = (await readFile(join(link.server.dataDir, 'audit', 'approvals.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audit.filter((record) => record.decision === 'deny')).toHaveLength(4);
    expect(audit.at(-1)).toMatchObject({ sessionId, tool: 'write_file', decision: 'allow', subjects: ['notes.md'] });
    expect(String(audit.at(-1)?.by)).toMatch(/^rule: "write_file": "allow" \(permissions.jsonc line \d+\)$/);
  });

  it('applies an edit of permissions.jsonc to the next call without a restart', async () => {
    await using link = await startTestLink();
    const sessionId = randomUUID();
    expect((await run(link, { sessionId, tool: 'read_file', args: { path: 'missing.txt' } })).meta?.errorKind).toBe(
      'not_found',
    );
    await writePermissions(link, '{ "*": "ask", "read_file": { "*": "deny" } }');
    expect((await run(link, { sessionId, tool: 'read_file', args: { path: 'missing.txt' } })).meta?.errorKind).toBe(
      'permission_denied',
    );
  });

  it('never allows from a broken file: it asks for everything when there never were good rules and reports line and column', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    await writePermissions(link, '{\n  "read_file": "allow",\n  "*": "sometimes"\n}\n');
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'read_file', args: { path: 'a.txt' } });
    await waitFor(() => watch.requested().length === 1, { what: 'read_file to ask' });
    const problem = watch.events.find((event) => event.type === 'permissions.invalid');
    expect(problem).toMatchObject({
      type: 'permissions.invalid',
      problem: { line: 3, column: 8, fallback: 'ask_everything', workerId: link.worker.workerId },
    });
    expect(problem?.type === 'permissions.invalid' && problem.problem.message).toContain(
      '"sometimes", which is not an action',
    );
    link.server.gate.close();
    await call;
  });

  it('keeps the last good rules while the file is broken, and reports the problem to clients that subscribe later', async () => {
    await using link = await startTestLink();
    const sessionId = randomUUID();
    await writePermissions(link, '{ "*": "ask", "read_file": { "*": "deny" } }');
    expect((await run(link, { sessionId, tool: 'read_file', args: { path: 'a.txt' } })).meta?.errorKind).toBe(
      'permission_denied',
    );

    await writePermissions(link, '{ "*": "allow", "read_file": { "*": "allow" }');
    expect((await run(link, { sessionId, tool: 'read_file', args: { path: 'a.txt' } })).meta?.errorKind).toBe(
      'permission_denied',
    );

    await using client = await clientOf(link);
    using watch = watchApprovals(client, { workerId: link.worker.workerId });
    await waitFor(() => watch.events.length === 1, { what: 'the replayed problem' });
    expect(watch.events[0]).toMatchObject({
      type: 'permissions.invalid',
      problem: { fallback: 'last_good_rules', line: 1 },
    });
    const shown = await client.rpc.permissions.show.query({ workerId: link.worker.workerId });
    expect(shown.problem?.message).toBe('an object is not closed: a } is missing');
  });

  it('cancels a pending approval when the call is aborted', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const controller = new AbortController();
    const call = run(link, {
      sessionId: randomUUID(),
      tool: 'shell_exec',
      args: { command: 'echo x' },
      signal: controller.signal,
    });
    await waitFor(() => watch.requested().length === 1);
    controller.abort();
    expect((await call).meta?.errorKind).toBe('cancelled');
    await waitFor(() => watch.resolved().length === 1);
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'cancelled', reason: 'the turn was aborted' });
    expect(link.server.gate.pending()).toEqual([]);
  });

  it('denies at once an unattended call that asks while nobody watches, when its policy is "deny"', async () => {
    await using link = await startTestLink();
    const sessionId = randomUUID();
    let watched = false;
    const unattended = {
      policy: 'deny' as const,
      waitMs: 60_000,
      runBy: 'the cron job "nightly"',
      watched: () => watched,
    };
    const refused = await run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo unwatched' }, unattended });
    expect(refused).toMatchObject({ meta: { errorKind: 'permission_denied' } });
    expect(refused.output + (refused.error ?? '')).toContain('nobody is watching the cron job "nightly"');
    expect(link.server.gate.pending({ sessionId })).toEqual([]);

    // A person watching is asked, and their answer counts.
    await using client = await clientOf(link);
    using watch = watchApprovals(client, { sessionId });
    watched = true;
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo watched' }, unattended });
    await waitFor(() => watch.requested().length === 1, { what: 'approval.requested' });
    await client.rpc.approvals.approve.mutate({
      sessionId,
      approvalId: watch.requested()[0]?.approvalId ?? '',
      scope: 'once',
    });
    expect((await call).output).toContain('watched');
  });

  it('denies an unattended call nobody answered within its wait, and says why in its resolution', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    using watch = watchApprovals(client, { sessionId });
    const unattended = { policy: 'wait' as const, waitMs: 200, runBy: 'the cron job "nightly"', watched: () => false };
    const result = await run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo late' }, unattended });
    expect(result).toMatchObject({ meta: { errorKind: 'permission_denied' } });
    expect(result.output + (result.error ?? '')).toContain('nobody answered within 200 ms');
    await waitFor(() => watch.resolved().length === 1, { what: 'approval.resolved' });
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'denied' });
    expect(watch.resolved()[0]?.by).toContain('nobody answered');
  });

  it('denies pending approvals with a reason when their worker goes offline', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const call = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'echo x' } });
    await waitFor(() => watch.requested().length === 1);
    await link.worker.close();
    const result = await call;
    expect(result.meta?.errorKind).toBe('worker_offline');
    expect(result.error).toContain('went offline');
    await waitFor(() => watch.resolved().length === 1);
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'denied', by: 'server' });
  });

  it('gates MCP-style tools by their name, and "always" saves the whole tool', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();
    // The worker has no such tool; what matters is that the gate asks first and "always" sticks.
    const call = run(link, { sessionId, tool: 'github_create_issue', args: { title: 'x' } });
    await waitFor(() => watch.requested().length === 1);
    expect(watch.requested()[0]?.alwaysPatterns).toEqual(['*']);
    await client.rpc.approvals.approve.mutate({
      sessionId,
      approvalId: watch.requested()[0]?.approvalId ?? '',
      scope: 'always',
    });
    expect((await call).meta?.errorKind).toBe('tool_not_found');
    expect(await permissionsText(link)).toMatch(
      /"github_create_issue": \{\s*"\*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}\s*\}/,
    );
    expect((await run(link, { sessionId: randomUUID(), tool: 'github_create_issue', args: {} })).meta?.errorKind).toBe(
      'tool_not_found',
    );
    expect(watch.requested()).toHaveLength(1);
  });

  it('explains a call over RPC and validates a new file before writing it', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const workerId = link.worker.workerId;
    const explanation = await client.rpc.permissions.explain.query({
      workerId,
      tool: 'shell_exec',
      args: { command: 'ls && rm -rf build' },
    });
    // rm is destructive: "always" offers only its exact command, and says why.
    expect(explanation).toMatchObject({
      decision: 'ask',
      alwaysPatterns: ['ls', 'rm -rf build'],
      alwaysNote: expect.stringMatching(/^rm deletes files for good/),
    });
    expect(explanation.subjects.map((subject) => subject.label)).toEqual(['ls', 'rm -rf build']);

    await expect(client.rpc.permissions.write.mutate({ workerId, text: '{ "*": "maybe" }' })).rejects.toMatchObject({
      data: { code: 'permissions_invalid' },
      message: expect.stringContaining('line 1, column 8'),
    });
    await client.rpc.permissions.write.mutate({ workerId, text: '{ "*": "ask", "shell_exec": { "rm *": "deny" } }' });
    const after = await client.rpc.permissions.explain.query({
      workerId,
      tool: 'shell_exec',
      args: { command: 'ls && rm -rf build' },
    });
    expect(after.decision).toBe('deny');
    await expect(client.rpc.permissions.show.query({ workerId: randomUUID() as never })).rejects.toMatchObject({
      data: { code: 'worker_not_found' },
    });
  });

  it('never lets a session or always answer lift a deny of the file; the saved rule goes before the deny', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    await writePermissions(
      link,
      '{\n  "*": "ask",\n  "shell_exec": {\n    "*": "ask",\n    "echo *secret*": "deny" // never echo secrets\n  }\n}\n',
    );
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo one' } });
    await waitFor(() => watch.requested().length === 1);
    expect(watch.requested()[0]?.alwaysPatterns).toEqual(['echo *']);
    await client.rpc.approvals.approve.mutate({
      sessionId,
      approvalId: watch.requested()[0]?.approvalId ?? '',
      scope: 'always',
    });
    expect((await call).output).toContain('one');

    for (const session of [sessionId, randomUUID()]) {
      expect(
        (await run(link, { sessionId: session, tool: 'shell_exec', args: { command: 'echo two' } })).output,
      ).toContain('two');
      const refused = await run(link, { sessionId: session, tool: 'shell_exec', args: { command: 'echo my-secret' } });
      expect(refused.meta?.errorKind).toBe('permission_denied');
    }
    expect(await permissionsText(link)).toMatch(
      /^\{\n {2}"\*": "ask",\n {2}"shell_exec": \{\n {4}"\*": "ask",\n {4}"echo \*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \},\n {4}"echo \*secret\*": "deny" \/\/ never echo secrets\n {2}\}\n\}\n$/,
    );
  });

  it('keeps an "always" answer that an abort follows while the rule is saved; the call itself is cancelled', async () => {
    await using link = await startTestLink();
    // The file touch writes is allowed, so that the line offers "always" (`touch *`).
    await writePermissions(link, defaultRulesAllowingEdits());
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();
    const controller = new AbortController();
    const call = run(link, {
      sessionId,
      tool: 'shell_exec',
      args: { command: 'touch aborted.txt' },
      signal: controller.signal,
    });
    await waitFor(() => link.server.gate.pending().length === 1);
    const approvalId = link.server.gate.pending()[0]?.approvalId ?? '';
    const approving = link.server.gate.approve({
      sessionId,
      approvalId,
      scope: 'always',
      by: { credentialId: 'alice', connectionId: 'c1' },
    });
    controller.abort();
    expect(await approving).toEqual({ applied: true });
    expect((await call).meta?.errorKind).toBe('cancelled');
    await expect(readFile(join(link.workdir, 'aborted.txt'))).rejects.toThrow();
    await waitFor(() => watch.resolved().length === 1);
    expect(watch.resolved()).toMatchObject([{ approvalId, outcome: 'approved', scope: 'always', by: 'client:alice' }]);
    expect(await permissionsText(link)).toMatch(/"touch \*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}/);
    const audit = await readFile(join(link.server.dataDir, 'audit', 'approvals.jsonl'), 'utf8');
    expect(audit).toContain('"decision":"rules_changed"');
    expect(audit).toContain('"decision":"approved"');
    expect(audit).not.toContain('"decision":"cancelled"');
  });

  it('refuses "always" while the file is broken, keeps the approval pending, and still takes "session"', async () => {
    await using link = await startTestLink();
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo kept' } });
    await waitFor(() => link.server.gate.pending().length === 1);
    const approvalId = link.server.gate.pending()[0]?.approvalId ?? '';
    await writePermissions(link, '{ "*": "ask", ');
    const by = { credentialId: 'alice', connectionId: 'c1' };
    await expect(link.server.gate.approve({ sessionId, approvalId, scope: 'always', by })).rejects.toMatchObject({
      code: 'permissions_invalid',
    });
    expect(link.server.gate.pending()).toHaveLength(1);
    expect(await link.server.gate.approve({ sessionId, approvalId, scope: 'session', by })).toEqual({ applied: true });
    expect((await call).output).toContain('kept');
  });

  it('denies an approved call when a deny rule was added while it waited', async () => {
    await using link = await startTestLink();
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'shell_exec', args: { command: 'touch late-deny.txt' } });
    await waitFor(() => link.server.gate.pending().length === 1);
    await writePermissions(link, '{ "*": "ask", "shell_exec": { "touch *": "deny" } }');
    const approvalId = link.server.gate.pending()[0]?.approvalId ?? '';
    const answer = await link.server.gate.approve({
      sessionId,
      approvalId,
      scope: 'once',
      by: { credentialId: 'alice', connectionId: 'c1' },
    });
    expect(answer).toEqual({ applied: false });
    expect((await call).meta?.errorKind).toBe('permission_denied');
    await expect(readFile(join(link.workdir, 'late-deny.txt'))).rejects.toThrow();
  });

  it('re-judges waiting calls when the file is edited by hand: one a new allow covers runs, one a new deny covers is refused', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const released = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'echo released' } });
    const refused = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'touch refused.txt' } });
    const waiting = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'pwd' } });
    await waitFor(() => watch.requested().length === 3, { what: 'three approvals' });

    await writePermissions(link, '{ "*": "ask", "shell_exec": { "*": "ask", "echo *": "allow", "touch *": "deny" } }');
    expect((await released).output).toContain('released');
    expect((await refused).meta?.errorKind).toBe('permission_denied');
    await expect(readFile(join(link.workdir, 'refused.txt'))).rejects.toThrow();
    await waitFor(() => watch.resolved().length === 2);
    expect(watch.resolved().map((event) => [event.outcome, event.by.startsWith('rule: ')])).toEqual(
      expect.arrayContaining([
        ['approved', true],
        ['denied', true],
      ]),
    );
    expect(link.server.gate.pending().map((approval) => approval.args.command)).toEqual(['pwd']);
    link.server.gate.close();
    await waiting;
  });

  it('after "always", runs the calls of other sessions that the saved rule allows', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();
    const first = run(link, { sessionId, tool: 'shell_exec', args: { command: 'echo first' } });
    const elsewhere = run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'echo elsewhere' } });
    await waitFor(() => watch.requested().length === 2);
    const approval = watch.requested().find((candidate) => candidate.args.command === 'echo first');
    await client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval?.approvalId ?? '', scope: 'always' });
    expect((await first).output).toContain('first');
    expect((await elsewhere).output).toContain('elsewhere');
  });

  it('asks nobody about a call to a worker that is already offline', async () => {
    await using link = await startTestLink();
    await link.worker.close();
    await waitFor(() => link.server.registry.get(link.worker.workerId)?.state === 'offline');
    const result = await run(link, { sessionId: randomUUID(), tool: 'shell_exec', args: { command: 'echo x' } });
    expect(result.meta?.errorKind).toBe('worker_offline');
    expect(link.server.gate.pending()).toEqual([]);
  });

  it('treats a rules file deleted while the server runs as a problem and keeps its last rules, instead of reseeding the defaults', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client, { workerId: link.worker.workerId });
    const sessionId = randomUUID();
    await writePermissions(link, '{ "*": "ask", "write_file": "deny" }');
    const args = { path: 'x.txt', content: 'x' };
    expect((await run(link, { sessionId, tool: 'write_file', args })).meta?.errorKind).toBe('permission_denied');
    await rm(link.server.permissions.pathOf(link.worker.workerId));
    expect((await run(link, { sessionId, tool: 'write_file', args })).meta?.errorKind).toBe('permission_denied');
    await waitFor(() => watch.events.some((event) => event.type === 'permissions.invalid'));
    expect(watch.events.find((event) => event.type === 'permissions.invalid')).toMatchObject({
      problem: { fallback: 'last_good_rules', message: expect.stringContaining('was deleted') },
    });

    await writePermissions(link, '{ "*": "ask", "write_file": "allow" }');
    expect((await run(link, { sessionId, tool: 'write_file', args })).error).toBeUndefined();
    await waitFor(() => watch.events.some((event) => event.type === 'permissions.valid'));
    expect(link.server.gate.problems()).toEqual([]);
  });

  it('refuses a write of the rules that started from an older version', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const workerId = link.worker.workerId;
    const shown = await client.rpc.permissions.show.query({ workerId });
    await link.server.permissions.appendAllow(workerId, { tool: 'shell_exec', patterns: ['make *'] });
    await expect(
      client.rpc.permissions.write.mutate({ workerId, text: '{ "*": "allow" }', baseVersion: shown.version }),
    ).rejects.toMatchObject({ data: { code: 'conflict' } });
    expect(await permissionsText(link)).toContain('"make *": "allow"');
  });
});

describe('paths between approval and execution', () => {
  it('refuses an approved write whose path was turned into a link to another file while it waited', async () => {
    await using link = await startTestLink();
    await writePermissions(link, '{ "*": "ask", "write_file": { "*": "ask", "*.env": "deny" } }');
    await writeFile(join(link.workdir, '.env'), 'API_KEY=1\n');
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'write_file', args: { path: 'notes.txt', content: 'pwned' } });
    await waitFor(() => link.server.gate.pending().length === 1);
    await symlink('.env', join(link.workdir, 'notes.txt'));
    const approvalId = link.server.gate.pending()[0]?.approvalId ?? '';
    await link.server.gate.approve({
      sessionId,
      approvalId,
      scope: 'once',
      by: { credentialId: 'a', connectionId: 'c' },
    });
    const result = await call;
    expect(result.meta?.errorKind).toBe('permission_denied');
    expect(result.error).toContain('"notes.txt" now leads to');
    expect(await readFile(join(link.workdir, '.env'), 'utf8')).toBe('API_KEY=1\n');
  });
});

describe('grep under the read_file rules', () => {
  it('answers the same whether or not a denied file matches, even when matches are capped', async () => {
    await using link = await startTestLink();
    await writeFile(join(link.workdir, '.env'), `${'API_KEY=sk-hunter2\n'.repeat(300)}`);
    await writeFile(join(link.workdir, 'app.ts'), 'const key = process.env.API_KEY;\n');
    const sessionId = randomUUID();
    const hit = await run(link, { sessionId, tool: 'grep', args: { pattern: 'API_KEY=sk-h' } });
    const miss = await run(link, { sessionId, tool: 'grep', args: { pattern: 'API_KEY=sk-x' } });
    expect(hit.output.replace('sk-h', 'sk-x')).toBe(miss.output);
    // Matches in the denied file do not use up the cap before the allowed file's are found.
    const broad = await run(link, { sessionId, tool: 'grep', args: { pattern: 'API_KEY' } });
    expect(broad.output).toContain('app.ts:1:');
    expect(broad.output).not.toContain('Stopped at');
  });

  it('leaves files that read_file would ask about out of a directory search', async () => {
    await using link = await startTestLink();
    await writeFile(join(link.workdir, 'server.pem'), '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n');
    await writeFile(join(link.workdir, 'notes.md'), 'MIIE is a prefix\n');
    const result = await run(link, { sessionId: randomUUID(), tool: 'grep', args: { pattern: 'MII' } });
    expect(result.output).toContain('notes.md:1:');
    expect(result.output).not.toContain('MIIEvQIBADANBg');
  });

  it('refuses to search a denied file and leaves denied files out of a directory search, saying so', async () => {
    await using link = await startTestLink();
    await writeFile(join(link.workdir, '.env'), 'API_KEY=supersecret\n');
    await mkdir(join(link.workdir, 'config'));
    await writeFile(join(link.workdir, 'config', 'secret.json'), '{ "API_KEY": "another" }\n');
    await writeFile(join(link.workdir, '.env.example'), 'API_KEY=\n');
    await writeFile(join(link.workdir, 'app.ts'), 'const key = process.env.API_KEY;\n');
    const sessionId = randomUUID();

    const direct = await run(link, { sessionId, tool: 'grep', args: { pattern: 'API_KEY', path: '.env' } });
    expect(direct.meta?.errorKind).toBe('permission_denied');
    expect(direct.error).toContain('"read_file": { "*.env": "deny" }');

    const everywhere = await run(link, { sessionId, tool: 'grep', args: { pattern: 'API_KEY' } });
    expect(everywhere.error).toBeUndefined();
    expect(everywhere.output).toContain('app.ts:1:');
    expect(everywhere.output).toContain('.env.example:1:');
    expect(everywhere.output).not.toContain('supersecret');
    expect(everywhere.output).not.toContain('another');
    // Nothing in the answer tells whether a denied file matched (a yes/no oracle on its content).
    expect(everywhere.output).not.toMatch(/not shown|deny reading/);

    // Without the gate (a direct dispatch carries no rules) the same search sees everything.
    const ungated = await link.server.dispatcher.dispatch({
      workerId: link.worker.workerId,
      toolName: 'grep',
      args: { pattern: 'API_KEY' },
    });
    expect(ungated.output).toContain('supersecret');
  });
});

describe('the server data directory', () => {
  it('is off limits to every file tool, whatever the rules say, also through a symlink', async () => {
    await using project = await createTempDir();
    const dataDir = join(project.path, '.molf-data');
    await using server = await startTestServer({ dataDir });
    const worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: project.path });
    try {
      await worker.registered;
      await symlink(dataDir, join(project.path, 'innocent'));
      const rulesPath = join('.molf-data', 'workers', worker.workerId, 'permissions.jsonc');
      await server.permissions.writeText(worker.workerId, '{ "*": "allow" }');
      for (const [tool, args] of [
        ['write_file', { path: rulesPath, content: '{ "*": "allow" }', overwrite: true }],
        ['read_file', { path: join('.molf-data', 'credentials.json') }],
        ['edit_file', { path: join('innocent', 'audit', 'approvals.jsonl'), oldString: 'x', newString: 'y' }],
        ['grep', { pattern: 'token', path: 'innocent' }],
      ] as const) {
        const result = await server.toolCalls.run({
          sessionId: 's',
          workerId: worker.workerId,
          tool,
          args: { ...args },
        });
        expect(result.meta?.errorKind, tool).toBe('permission_denied');
        expect(result.error).toContain("inside the Molf server's data directory");
      }
      const allowed = await server.toolCalls.run({
        sessionId: 's',
        workerId: worker.workerId,
        tool: 'write_file',
        args: { path: 'src.txt', content: 'ok' },
      });
      expect(allowed.error).toBeUndefined();
    } finally {
      await worker.close();
    }
  });
});

describe('files a shell line reads and writes', () => {
  it('asks the worker where they lead and where its globs point, and refuses what read_file or write_file may not touch', async () => {
    await using link = await startTestLink();
    await writeFile(join(link.workdir, '.env'), 'API_KEY=secret\n');
    await writeFile(join(link.workdir, 'notes.txt'), 'hello\n');
    await symlink('.env', join(link.workdir, 'settings.txt'));
    await writePermissions(
      link,
      `${readDefaultPermissionsText().replace(/"shell_exec": "ask"/, '"shell_exec": { "*": "allow", "rm *": "deny" }')}`,
    );
    const sessionId = randomUUID();
    for (const command of ['cat settings.txt', 'cat sett*', 'cat < settings.txt', 'echo x > sub/.git/config']) {
      const result = await run(link, { sessionId, tool: 'shell_exec', args: { command } });
      expect(result.meta?.errorKind, command).toBe('permission_denied');
    }
    const allowed = await run(link, { sessionId, tool: 'shell_exec', args: { command: 'cat notes.t*' } });
    expect(allowed.output).toContain('hello');
  });

  it('asks about a line naming more files than one path check takes, instead of refusing it', async () => {
    await using link = await startTestLink();
    await writePermissions(link, '{ "shell_exec": { "*": "allow" }, "read_file": { "*.env": "deny" } }');
    const files = Array.from({ length: 300 }, (_, index) => `f${index}.txt`).join(' ');
    await using client = await clientOf(link);
    const evaluation = await client.rpc.permissions.explain.query({
      workerId: link.worker.workerId,
      tool: 'shell_exec',
      args: { command: `cat ${files}` },
    });
    expect(evaluation.decision).toBe('ask');
    expect(evaluation.reason).toMatch(/could not tell where f2[5-9]\d\.txt leads/);
  });

  it('has the worker look through a directory a line reads whole for a file read_file may not read', async () => {
    await using link = await startTestLink();
    await mkdir(join(link.workdir, 'config', 'prod'), { recursive: true });
    await mkdir(join(link.workdir, 'src'), { recursive: true });
    await writeFile(join(link.workdir, 'config', 'prod', 'db.env'), 'API_KEY=secret\n');
    await writeFile(join(link.workdir, 'src', 'a.txt'), 'API_KEY appears here\n');
    await writePermissions(
      link,
      `${readDefaultPermissionsText().replace(/"shell_exec": "ask"/, '"shell_exec": { "*": "allow", "rm *": "deny" }')}`,
    );
    const sessionId = randomUUID();
    for (const command of ['grep -r API_KEY .', 'grep -rn API_KEY config', 'cp -r config copy']) {
      const result = await run(link, { sessionId, tool: 'shell_exec', args: { command } });
      expect(result.meta?.errorKind, command).toBe('permission_denied');
    }
    const allowed = await run(link, { sessionId, tool: 'shell_exec', args: { command: 'grep -r API_KEY src' } });
    expect(allowed.output).toContain('appears here');
  });

  it('asks before a line reads a whole directory holding a file read_file would ask about', async () => {
    await using link = await startTestLink();
    await mkdir(join(link.workdir, 'certs'), { recursive: true });
    await writeFile(join(link.workdir, 'certs', 'server.pem'), 'MIIEvQIBADANBg\n');
    await writePermissions(
      link,
      `${readDefaultPermissionsText().replace(/"shell_exec": "ask"/, '"shell_exec": { "*": "allow" }')}`,
    );
    const evaluation = await link.server.gate.explain({
      workerId: link.worker.workerId,
      tool: 'shell_exec',
      args: { command: 'grep -r MII certs' },
    });
    expect(evaluation.decision).toBe('ask');
  });

  it('keeps the server data directory off limits to a shell line too', async () => {
    await using project = await createTempDir();
    const dataDir = join(project.path, '.molf-data');
    await using server = await startTestServer({ dataDir });
    const worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: project.path });
    try {
      await worker.registered;
      await server.permissions.writeText(worker.workerId, '{ "*": "allow" }');
      const result = await server.toolCalls.run({
        sessionId: 's',
        workerId: worker.workerId,
        tool: 'shell_exec',
        args: { command: 'cat .molf-data/credentials.json' },
      });
      expect(result.meta?.errorKind).toBe('permission_denied');
      expect(result.error).toContain("inside the Molf server's data directory");
    } finally {
      await worker.close();
    }
  });
});

describe('the path check folded into the call', () => {
  /** Counts the gate's questions to the worker about where paths lead. */
  function countPathChecks(link: Link) {
    const { dispatcher } = link.server;
    const original = dispatcher.request.bind(dispatcher);
    const counted = { paths: 0 };
    dispatcher.request = ((options: Parameters<typeof original>[0]) => {
      if (options.request.method === 'paths/resolve') counted.paths += 1;
      return original(options);
    }) as typeof dispatcher.request;
    return counted;
  }

  it('runs a file tool call the rules allow without asking the worker where its path leads first', async () => {
    await using link = await startTestLink();
    await writePermissions(link, '{ "*": "ask", "read_file": "allow", "write_file": "allow" }');
    await writeFile(join(link.workdir, 'notes.txt'), 'plain text\n');
    const checks = countPathChecks(link);
    const read = await run(link, { sessionId: randomUUID(), tool: 'read_file', args: { path: 'notes.txt' } });
    expect(read.output).toContain('plain text');
    const written = await run(link, {
      sessionId: randomUUID(),
      tool: 'write_file',
      args: { path: 'new.txt', content: 'x' },
    });
    expect(written.error).toBeUndefined();
    expect(checks.paths).toBe(0);
  });

  it('judges a call again on where a link really leads, and never runs it on the first judgement', async () => {
    await using link = await startTestLink();
    await writePermissions(link, '{ "*": "ask", "read_file": { "*": "allow", ".env": "deny" } }');
    await writeFile(join(link.workdir, '.env'), 'TOKEN=secret\n');
    await symlink('.env', join(link.workdir, 'harmless.txt'));
    const checks = countPathChecks(link);
    const result = await run(link, { sessionId: randomUUID(), tool: 'read_file', args: { path: 'harmless.txt' } });
    expect(result.meta?.errorKind).toBe('permission_denied');
    expect(result.error).toContain('.env');
    expect(result.output).not.toContain('secret');
    expect(checks.paths).toBe(1);
  });

  it('asks the worker before a person is asked, so the person sees where the path really leads', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    await writePermissions(link, '{ "*": "ask" }');
    await writeFile(join(link.workdir, 'real.txt'), 'x\n');
    await symlink('real.txt', join(link.workdir, 'alias.txt'));
    const checks = countPathChecks(link);
    const sessionId = randomUUID();
    const call = run(link, { sessionId, tool: 'read_file', args: { path: 'alias.txt' } });
    await waitFor(() => watch.requested().length === 1, { what: 'the read to ask' });
    expect(checks.paths).toBe(1);
    expect(watch.requested()[0]?.subjects.map((subject) => subject.label)).toEqual(
      expect.arrayContaining([expect.stringContaining('real.txt')]),
    );
    await client.rpc.approvals.deny.mutate({ sessionId, approvalId: watch.requested()[0]?.approvalId ?? '' });
    expect((await call).meta?.errorKind).toBe('permission_denied');
  });
});
