import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import type { CronEvent } from '@molf/protocol';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { follow, newSession, startStack } from '../testing/agent-stack.ts';
import { createManualClock } from '../testing/manual-clock.ts';
import { TEST_WORKER_TOKEN, waitFor } from '../testing/test-link.ts';

const START = new Date('2026-11-24T10:00:00.000Z');

/** A stack whose cron scheduler runs on a clock the test moves. */
async function cronStack(options: Parameters<typeof startStack>[0] = {}) {
  const time = createManualClock(START);
  const stack = await startStack({ ...options, cron: { clock: time.clock, timezone: 'UTC' } });
  const events: CronEvent[] = [];
  const subscription = stack.client.rpc.cron.events.subscribe({}, { onData: (event) => events.push(event) });
  const disposeStack = stack[Symbol.asyncDispose].bind(stack);
  return Object.assign(stack, {
    time,
    cronEvents: events,
    async [Symbol.asyncDispose]() {
      subscription.unsubscribe();
      await disposeStack();
    },
  });
}

describe('cron runs through a real server, worker and the fake LLM', () => {
  it('sends the prompt into the session like a user’s, marked with the job, and shows last and next run', async () => {
    await using stack = await cronStack({ turns: [{ text: 'All green.' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    const job = await stack.client.rpc.cron.add.mutate({
      workerId: stack.link.worker.workerId,
      schedule: { every: '1m' },
      prompt: 'Run the tests and summarise failures',
      session: session.sessionId,
    });
    expect(job).toMatchObject({ nextRunAt: '2026-11-24T10:01:00.000Z', runs: 0, onAsk: 'deny' });

    stack.time.advance(60_000);
    await watch.turnEnded();
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages[0]).toMatchObject({
      role: 'user',
      text: 'Run the tests and summarise failures',
      cronJobId: job.jobId,
    });
    expect(messages[1]).toMatchObject({ role: 'assistant', text: 'All green.' });
    expect(watch.events.find((event) => event.type === 'turn.started')).toMatchObject({ cronJobId: job.jobId });
    await waitFor(() => stack.cronEvents.some((event) => event.type === 'cron.fired'), { what: 'cron.fired' });
    const [listed] = await stack.client.rpc.cron.list.query({});
    expect(listed).toMatchObject({
      runs: 1,
      nextRunAt: '2026-11-24T10:02:00.000Z',
      lastRun: { outcome: 'started', scheduledFor: '2026-11-24T10:01:00.000Z', sessionId: session.sessionId },
    });
  });

  it('queues the prompt behind a running turn: not lost, run after it', async () => {
    await using stack = await cronStack({
      turns: [{ text: ['Working', ' on', ' it', '.'], chunkDelayMs: 300 }, { text: 'Checked.' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'A long task' });
    await waitFor(() => watch.types().includes('message.delta'), { what: 'the first turn streaming' });
    const job = await stack.client.rpc.cron.add.mutate({
      workerId: stack.link.worker.workerId,
      schedule: { at: '5m' },
      prompt: 'Check the deploy',
      session: session.sessionId,
    });
    stack.time.advance(5 * 60_000);
    await waitFor(() => stack.cronEvents.some((event) => event.type === 'cron.fired'), { what: 'cron.fired' });
    expect(stack.cronEvents[0]).toMatchObject({ type: 'cron.fired', jobId: job.jobId, queued: true });
    await watch.turnEnded(2);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(messages[2]).toMatchObject({ text: 'Check the deploy', cronJobId: job.jobId });
    // An `at` job runs once.
    expect((await stack.client.rpc.cron.list.query({}))[0]?.nextRunAt).toBeUndefined();
  });

  it('skips a slot while the prompt of the slot before still waits behind a long turn, instead of queueing another', async () => {
    await using stack = await cronStack({
      turns: [{ text: ['Working', ' on', ' it', '.'], chunkDelayMs: 400 }, { text: 'Checked.' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'A long task' });
    await waitFor(() => watch.types().includes('message.delta'), { what: 'the long turn streaming' });
    const job = await stack.client.rpc.cron.add.mutate({
      workerId: stack.link.worker.workerId,
      schedule: { every: '1m' },
      prompt: 'Check the log',
      session: session.sessionId,
    });
    stack.time.advance(60_000);
    await waitFor(async () => (await stack.client.rpc.cron.list.query({}))[0]?.lastRun?.outcome === 'queued', {
      what: 'the first slot queued',
    });
    stack.time.advance(60_000);
    await waitFor(async () => (await stack.client.rpc.cron.list.query({}))[0]?.lastRun?.outcome === 'skipped', {
      what: 'the second slot skipped',
    });
    expect((await stack.client.rpc.cron.list.query({}))[0]).toMatchObject({
      runs: 1,
      lastRun: { reason: expect.stringContaining('still waits') },
    });
    await watch.turnEnded(2);
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages.filter((message) => message.role === 'user' && message.cronJobId === job.jobId)).toHaveLength(1);
  });

  it('records a run while the worker is offline as failed, retries after 30 s, then runs once it is back', async () => {
    await using stack = await cronStack({ turns: [{ text: 'Back.' }] });
    const session = await newSession(stack);
    const job = await stack.client.rpc.cron.add.mutate({
      workerId: stack.link.worker.workerId,
      schedule: { every: '10m' },
      prompt: 'Watch the log',
      session: session.sessionId,
    });
    await stack.link.worker.close();
    await waitFor(() => stack.link.server.registry.get(stack.link.worker.workerId)?.state === 'offline', {
      what: 'the worker offline',
    });
    stack.time.advance(10 * 60_000);
    await waitFor(() => stack.cronEvents.some((event) => event.type === 'cron.failed'), { what: 'cron.failed' });
    expect(stack.cronEvents[0]).toMatchObject({
      type: 'cron.failed',
      reason: expect.stringContaining('offline'),
      retryAt: '2026-11-24T10:10:30.000Z',
    });
    expect((await stack.client.rpc.cron.list.query({}))[0]).toMatchObject({
      consecutiveFailures: 1,
      lastRun: { outcome: 'failed' },
    });

    // The same project directory: the same worker id.
    await using worker = await createWorker({
      serverUrl: stack.link.server.url,
      token: TEST_WORKER_TOKEN,
      workdir: stack.link.workdir,
    });
    await worker.registered;
    using watch = follow(stack.client, session.sessionId);
    stack.time.advance(30_000);
    await watch.turnEnded();
    const [after] = await stack.client.rpc.cron.list.query({});
    expect(after).toMatchObject({ consecutiveFailures: 0, runs: 1, nextRunAt: '2026-11-24T10:20:00.000Z' });
    expect(after?.lastRun).toMatchObject({ outcome: 'started', scheduledFor: '2026-11-24T10:10:00.000Z' });
    expect(job.jobId).toBe(after?.jobId);
  });

  it('denies a run’s tool call that asks while nobody watches, and lets a watching client approve it', async () => {
    const asking = { toolCalls: [{ id: 's1', name: 'shell_exec', arguments: { command: 'echo from-cron' } }] };
    await using stack = await cronStack({ turns: [asking, { text: 'Denied, noted.' }, asking, { text: 'Ran it.' }] });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.cron.add.mutate({
      workerId: stack.link.worker.workerId,
      schedule: { every: '1h' },
      prompt: 'Say hello from the shell',
      session: session.sessionId,
    });
    stack.time.advance(3_600_000);
    await watch.turnEnded();
    const denied = (await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).messages.find(
      (message) => message.role === 'tool',
    );
    expect(denied).toMatchObject({ errorKind: 'permission_denied' });
    expect(`${denied?.role === 'tool' ? denied.error : ''}`).toContain('nobody is watching');

    // A person follows the approvals: the next run asks them, and their answer counts.
    const requested: string[] = [];
    const approvals = stack.client.rpc.approvals.events.subscribe(
      {},
      {
        onData: (event) => {
          if (event.type === 'approval.requested') requested.push(event.approval.approvalId);
        },
      },
    );
    try {
      await waitFor(() => stack.link.server.gate.pending().length === 0, { what: 'nothing pending' });
      stack.time.advance(3_600_000);
      await waitFor(() => requested.length === 1, { what: 'the run’s approval' });
      await stack.client.rpc.approvals.approve.mutate({
        sessionId: session.sessionId,
        approvalId: requested[0] ?? '',
        scope: 'once',
      });
      await watch.turnEnded(2);
    } finally {
      approvals.unsubscribe();
    }
    const results = (await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).messages.filter(
      (message) => message.role === 'tool',
    );
    expect(results[1]).toMatchObject({ output: expect.stringContaining('from-cron') });
  });

  it('asks before the model’s cron tool schedules a job, showing schedule and prompt; denied, nothing is stored', async () => {
    const add = (id: string) => ({
      toolCalls: [{ id, name: 'cron', arguments: { action: 'add', every: '30m', prompt: 'Watch the log for errors' } }],
    });
    await using stack = await cronStack({
      turns: [add('c1'), { text: 'Scheduled.' }, add('c2'), { text: 'Not scheduled.' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    const requested: Array<{ approvalId: string; label: string }> = [];
    const approvals = stack.client.rpc.approvals.events.subscribe(
      { sessionId: session.sessionId },
      {
        onData: (event) => {
          if (event.type === 'approval.requested') {
            requested.push({ approvalId: event.approval.approvalId, label: event.approval.subjects[0]?.label ?? '' });
          }
        },
      },
    );
    try {
      await stack.client.rpc.sessions.prompt.mutate({
        sessionId: session.sessionId,
        text: 'Watch the log every 30 min',
      });
      await waitFor(() => requested.length === 1, { what: 'the cron approval' });
      expect(requested[0]?.label).toBe('add every 30m: "Watch the log for errors"');
      await stack.client.rpc.approvals.approve.mutate({
        sessionId: session.sessionId,
        approvalId: requested[0]?.approvalId ?? '',
        scope: 'once',
      });
      await watch.turnEnded();
      const [job] = await stack.client.rpc.cron.list.query({});
      // Runs go to the session that asked for them, made by its tool call.
      expect(job).toMatchObject({
        schedule: { kind: 'every', everyMs: 1_800_000 },
        target: { type: 'session', sessionId: session.sessionId },
        createdBy: { sessionId: session.sessionId, toolCallId: 'c1' },
      });

      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Again' });
      await waitFor(() => requested.length === 2, { what: 'the second cron approval' });
      await stack.client.rpc.approvals.deny.mutate({
        sessionId: session.sessionId,
        approvalId: requested[1]?.approvalId ?? '',
        feedback: 'not now',
      });
      await watch.turnEnded(2);
      expect(await stack.client.rpc.cron.list.query({})).toHaveLength(1);
    } finally {
      approvals.unsubscribe();
    }
  });

  it('runs a worker’s heartbeat: skipped without a model call when HEARTBEAT.md has nothing, silent when all is well, reported otherwise', async () => {
    await using stack = await cronStack({
      turns: [{ text: 'HEARTBEAT_OK' }, { text: 'HEARTBEAT_ALERT: the nightly build is red.' }],
    });
    const workerId = stack.link.worker.workerId;
    const job = await stack.client.rpc.cron.heartbeat.mutate({ workerId, enabled: true });
    expect(job).toMatchObject({ heartbeat: true, schedule: { kind: 'every', everyMs: 1_800_000 } });
    const sessionId = job?.target.type === 'session' ? job.target.sessionId : '';

    // No HEARTBEAT.md: skipped, no session message, no model call.
    stack.time.advance(30 * 60_000);
    await waitFor(async () => (await stack.client.rpc.cron.list.query({}))[0]?.lastRun?.outcome === 'skipped', {
      what: 'a skipped heartbeat',
    });
    expect(stack.llm.requests).toHaveLength(0);
    await writeFile(join(stack.link.workdir, 'HEARTBEAT.md'), '# Heartbeat\n<!-- nothing yet -->\n');
    stack.time.advance(30 * 60_000);
    await waitFor(
      async () => (await stack.client.rpc.cron.list.query({}))[0]?.nextRunAt === '2026-11-24T11:30:00.000Z',
      { what: 'a second skip' },
    );
    expect((await stack.client.rpc.cron.list.query({}))[0]).toMatchObject({
      runs: 0,
      lastRun: { outcome: 'skipped', reason: 'HEARTBEAT.md has nothing to check' },
    });
    expect(stack.llm.requests).toHaveLength(0);

    // A checklist: the model goes through it; all well is silent, something wrong is reported.
    await writeFile(join(stack.link.workdir, 'HEARTBEAT.md'), '# Heartbeat\n- is the nightly build green?\n');
    using watch = follow(stack.client, sessionId);
    stack.time.advance(30 * 60_000);
    await watch.turnEnded();
    expect(String(stack.llm.requests[0]?.messages.at(-1)?.content)).toContain('- is the nightly build green?');
    stack.time.advance(30 * 60_000);
    await watch.turnEnded(2);
    await waitFor(() => stack.cronEvents.some((event) => event.type === 'cron.reported'), { what: 'cron.reported' });
    expect(stack.cronEvents.filter((event) => event.type === 'cron.reported')).toEqual([
      expect.objectContaining({ jobId: job?.jobId, sessionId, text: 'the nightly build is red.' }),
    ]);

    // Off, then turned on twice at once: one heartbeat job, not two.
    await stack.client.rpc.cron.heartbeat.mutate({ workerId, enabled: false });
    await Promise.all([1, 2].map(() => stack.client.rpc.cron.heartbeat.mutate({ workerId, enabled: true })));
    expect((await stack.client.rpc.cron.list.query({})).filter((entry) => entry.heartbeat === true)).toHaveLength(1);
    expect(await stack.client.rpc.cron.heartbeat.mutate({ workerId, enabled: false })).toBeNull();
    expect(await stack.client.rpc.cron.list.query({})).toEqual([]);
  });

  it('applies the job’s onAsk to the asks of a subagent its run starts: denied at once while nobody watches', async () => {
    await using stack = await cronStack({
      permissions: '{ "*": "ask", "task": "allow" }',
      turns: [
        {
          toolCalls: [
            { id: 't1', name: 'task', arguments: { agent: 'general', description: 'check', prompt: 'Run it' } },
          ],
        },
        { toolCalls: [{ id: 's1', name: 'shell_exec', arguments: { command: 'echo from-the-child' } }] },
        { text: 'The shell was refused.' },
        { text: 'The subagent could not run it.' },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.cron.add.mutate({
      workerId: stack.link.worker.workerId,
      schedule: { every: '1h' },
      prompt: 'Delegate the check',
      session: session.sessionId,
    });
    stack.time.advance(3_600_000);
    await watch.turnEnded();
    const child = (await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId })).sessions[0];
    const { messages } = await stack.client.rpc.sessions.get.query({ sessionId: child?.sessionId ?? '' });
    const refused = messages.find((message) => message.role === 'tool');
    expect(refused).toMatchObject({ toolName: 'shell_exec', errorKind: 'permission_denied' });
    expect(refused?.role === 'tool' ? refused.error : '').toContain('nobody is watching');
    expect(stack.link.server.gate.pending()).toEqual([]);
  });

  it('denies a run’s tool call at once while only a viewer follows approvals: a viewer cannot answer them', async () => {
    const asking = (id: string) => ({ toolCalls: [{ id, name: 'shell_exec', arguments: { command: 'echo x' } }] });
    await using stack = await cronStack({
      turns: [asking('p1'), { text: 'Denied by the admin.' }, asking('c1'), { text: 'Refused, noted.' }],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    const { token } = await stack.client.rpc.tokens.create.mutate({ role: 'viewer', name: 'wall screen' });
    await using viewer = createMolfClient({ url: stack.link.server.url, token });
    await viewer.ready();
    const seen: string[] = [];
    const approvals = viewer.rpc.approvals.events.subscribe(
      {},
      {
        onData: (event) => {
          if (event.type === 'approval.requested') seen.push(event.approval.approvalId);
        },
      },
    );
    try {
      // The wall screen shows a person's approval: its subscription is live.
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'Run echo' });
      await waitFor(() => seen.length === 1, { what: 'the viewer to see the approval' });
      await stack.client.rpc.approvals.deny.mutate({ sessionId: session.sessionId, approvalId: seen[0] ?? '' });
      await watch.turnEnded();

      await stack.client.rpc.cron.add.mutate({
        workerId: stack.link.worker.workerId,
        schedule: { every: '1h' },
        prompt: 'Run echo on schedule',
        session: session.sessionId,
      });
      stack.time.advance(3_600_000);
      // Asked of nobody who could answer, the call would wait (10 min by default) instead of ending the turn.
      await waitFor(() => watch.types().filter((type) => type === 'turn.ended').length === 2 || seen.length > 1, {
        what: 'the run to end or ask',
      });
      expect(seen).toHaveLength(1);
      expect(stack.link.server.gate.pending()).toEqual([]);
      const results = (await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).messages.filter(
        (message) => message.role === 'tool',
      );
      expect(results[1]).toMatchObject({ errorKind: 'permission_denied' });
      expect(results[1]?.role === 'tool' ? results[1].error : '').toContain('nobody is watching');
    } finally {
      approvals.unsubscribe();
    }
  });

  it('refuses bad jobs with the field named, storing nothing', async () => {
    await using stack = await cronStack();
    const session = await newSession(stack);
    const workerId = stack.link.worker.workerId;
    const cases = [
      [{ every: '0m' }, 'schedule.every'],
      [{ every: '30s' }, 'schedule.every'],
      [{ every: '5x' }, 'schedule.every'],
      [{ at: '2020-01-01T00:00:00Z' }, 'schedule.at'],
      [{ cron: 'not a cron' }, 'schedule.cron'],
      [{ cron: '0 9 * * *', tz: 'Mars/Olympus' }, 'schedule.tz'],
    ] as const;
    for (const [schedule, field] of cases) {
      await expect(
        stack.client.rpc.cron.add.mutate({ workerId, schedule, prompt: 'x', session: session.sessionId }),
        JSON.stringify(schedule),
      ).rejects.toMatchObject({ data: { code: 'invalid_input', field } });
    }
    await expect(
      stack.client.rpc.cron.add.mutate({
        workerId,
        schedule: { every: '5m' },
        prompt: 'x',
        session: '00000000-0000-4000-8000-000000000000',
      }),
    ).rejects.toMatchObject({ data: { code: 'invalid_input', field: 'session' } });
    await expect(
      stack.client.rpc.cron.add.mutate({ workerId, schedule: { every: '5m' }, prompt: 'y'.repeat(200_001) }),
    ).rejects.toMatchObject({ data: { code: 'invalid_input' } });
    // A job whose first slot comes after its `until` would never run.
    for (const schedule of [{ at: '2d' }, { cron: '0 9 1 1 *' }]) {
      await expect(
        stack.client.rpc.cron.add.mutate({ workerId, schedule, until: '1d', prompt: 'x' }),
        JSON.stringify(schedule),
      ).rejects.toMatchObject({ data: { code: 'invalid_input', field: 'until' } });
    }
    expect(await stack.client.rpc.cron.list.query({})).toEqual([]);
  });
});
