import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newSession, startStack } from '../testing/agent-stack.ts';
import { startHttpReceiver } from '../testing/http-receiver.ts';
import { createManualClock } from '../testing/manual-clock.ts';
import { waitFor } from '../testing/test-link.ts';

describe('cron notifications', () => {
  it('tells the targets of a run that failed and of a heartbeat that reports, and of nothing else', async () => {
    await using receiver = await startHttpReceiver();
    const time = createManualClock(new Date('2026-11-24T10:00:00.000Z'));
    await using stack = await startStack({
      turns: [{ text: 'HEARTBEAT_OK' }, { text: 'HEARTBEAT_ALERT: the disk is 97 % full.' }],
      cron: { clock: time.clock, timezone: 'UTC' },
      notify: {
        targets: [
          { type: 'webhook', url: `${receiver.url}/hook` },
          { type: 'ntfy', url: `${receiver.url}/molf-cron` },
        ],
      },
    });
    const workerId = stack.link.worker.workerId;
    const session = await newSession(stack);
    const job = await stack.client.rpc.cron.add.mutate({
      workerId,
      name: 'deploy check',
      schedule: { every: '10m' },
      prompt: 'Check the deploy',
      session: session.sessionId,
    });
    await stack.client.rpc.sessions.delete.mutate({ sessionId: session.sessionId });
    time.advance(10 * 60_000);
    await waitFor(() => receiver.requests.length === 2, { what: 'the failure sent to both targets' });
    const hook = receiver.requests.find((request) => request.path === '/hook');
    expect(JSON.parse(hook?.body ?? '{}')).toMatchObject({
      type: 'cron.failed',
      event: { jobId: job.jobId, name: 'deploy check', reason: expect.stringContaining('no longer exists') },
      worker: { workerId },
    });
    const ntfy = receiver.requests.find((request) => request.path === '/molf-cron');
    expect(ntfy?.headers.title).toBe(`Scheduled prompt "deploy check" failed on ${stack.link.worker.name}`);
    expect(ntfy?.body).toContain('no longer exists');
    await stack.client.rpc.cron.remove.mutate({ jobId: job.jobId });

    // A heartbeat: all well sends nothing; a report is sent.
    await writeFile(join(stack.link.workdir, 'HEARTBEAT.md'), '- is there disk space left?\n');
    await stack.client.rpc.cron.heartbeat.mutate({ workerId, enabled: true, every: '30m' });
    time.advance(30 * 60_000);
    await waitFor(() => stack.llm.requests.length === 1, { what: 'the first heartbeat' });
    await waitFor(async () => (await stack.client.rpc.cron.list.query({}))[0]?.lastRun?.outcome === 'started', {
      what: 'the first heartbeat recorded',
    });
    time.advance(30 * 60_000);
    await waitFor(() => receiver.requests.length === 4, { what: 'the report sent to both targets' });
    const reports = receiver.requests.slice(2);
    expect(reports.map((request) => request.path).sort()).toEqual(['/hook', '/molf-cron']);
    const reported = JSON.parse(reports.find((request) => request.path === '/hook')?.body ?? '{}');
    expect(reported).toMatchObject({ type: 'cron.reported', event: { text: 'the disk is 97 % full.' } });
    expect(reports.find((request) => request.path === '/molf-cron')?.headers).toMatchObject({ priority: 'high' });
    // The first heartbeat (all well) sent nothing: only the failure and the report came.
    expect(receiver.requests).toHaveLength(4);
  });
});
