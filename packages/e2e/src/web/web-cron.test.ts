import type { CronAddInput } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openNewSession, startWebStack, until, type WebStack } from './web-stack.ts';

/** A job made the way a person's client makes one (`cron.add`). */
function addJob(web: WebStack, input: Omit<CronAddInput, 'workerId'>) {
  return web.server.cron.add(
    { workerId: web.worker.workerId, ...input },
    { createdBy: { client: 'web-cron-test' }, defaultTarget: { type: 'new' } },
  );
}

describe('scheduled prompts in the web client', () => {
  it('lists a job with its schedule, runs it now into its session marked as scheduled, pauses it and removes it', async () => {
    await using web = await startWebStack();
    web.llm.push({ text: 'All deploys are green.' });
    const session = await web.server.sessions.create({ workerId: web.worker.workerId, name: 'deploys' });
    const job = await addJob(web, {
      name: 'check deploys',
      schedule: { every: '1h' },
      prompt: 'Check the deploys',
      session: session.sessionId,
      onAsk: 'wait',
      maxRuns: 10,
    });
    const { page, errors } = await web.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(web.loginUrl);

    await page.getByTestId('open-scheduled').click();
    await page.waitForURL(/\/w\/[^/]+\/cron$/);
    const card = page.locator(`[data-testid=cron-job][data-job=${job.jobId}]`);
    await card.waitFor();
    await expect(card.locator('.cron-job-name').textContent()).resolves.toBe('check deploys');
    await expect(card.getByTestId('cron-schedule').textContent()).resolves.toBe('every 1h');
    await expect(card.getByTestId('cron-state').textContent()).resolves.toBe('active');
    await expect(card.getByTestId('cron-runs').textContent()).resolves.toBe('0 of 10');
    await expect(card.getByTestId('cron-on-ask').textContent()).resolves.toBe('wait 10m for a person, then deny');
    await expect(card.getByTestId('cron-target').textContent()).resolves.toBe(`session ${session.sessionId}`);
    await expect(card.getByTestId('cron-last-run').textContent()).resolves.toBe('—');
    await expect(card.getByTestId('cron-next').textContent()).resolves.toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC$/,
    );

    // Run now: the outcome with a link to the session; the list shows the run.
    await card.getByTestId('cron-run').click();
    const result = card.getByTestId('cron-run-result');
    await result.waitFor();
    await expect(result.getAttribute('data-outcome')).resolves.toMatch(/^(started|queued)$/);
    await card.locator('[data-testid=cron-runs]', { hasText: '1 of 10' }).waitFor();
    await card.locator('[data-testid=cron-last-run]', { hasText: /started|queued/ }).waitFor();

    // The session got the prompt, marked as the job's.
    await result.getByTestId('cron-session-link').click();
    await page.waitForURL(new RegExp(`/s/${session.sessionId}$`));
    await page.getByTestId('user-message').filter({ hasText: 'Check the deploys' }).waitFor();
    await expect(page.getByTestId('cron-mark').textContent()).resolves.toBe('⏰ scheduled: check deploys');
    await expect(page.getByTestId('cron-mark').getAttribute('data-job')).resolves.toBe(job.jobId);
    await page.getByTestId('assistant-message').filter({ hasText: 'All deploys are green.' }).waitFor();
    // Read from the stored history after a reload, it is still marked.
    await page.reload();
    await page.getByTestId('user-message').filter({ hasText: 'Check the deploys' }).waitFor();
    await page.getByTestId('cron-mark').filter({ hasText: 'scheduled: check deploys' }).waitFor();
    // The session list marks the session the job's runs go into.
    const row = page.getByTestId('session-row').filter({ hasText: 'deploys' });
    await row.getByTestId('session-cron').waitFor();
    await expect(row.getByTestId('session-cron').getAttribute('title')).resolves.toBe('scheduled: check deploys');

    // Pause: shown paused, and the server has it disabled.
    await page.getByTestId('open-scheduled').click();
    await card.getByTestId('cron-toggle').click();
    await page.locator(`[data-testid=cron-job][data-job=${job.jobId}][data-state=paused]`).waitFor();
    await expect(card.getByTestId('cron-toggle').textContent()).resolves.toBe('Resume');
    await expect(card.getByTestId('cron-next').textContent()).resolves.toBe('—');
    expect(web.server.cron.get(job.jobId)?.enabled).toBe(false);
    // The address names the view: a reload opens it again.
    await page.reload();
    await page.locator(`[data-testid=cron-job][data-job=${job.jobId}][data-state=paused]`).waitFor();

    // Remove, confirmed: gone, and the empty view says how to make one.
    await card.getByTestId('cron-remove').click();
    await page.getByTestId('cron-empty').waitFor();
    await expect(page.getByTestId('cron-empty').textContent()).resolves.toContain(
      'No scheduled prompts on this worker. Ask the model, or run molf cron add …',
    );
    expect(web.server.cron.list()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('updates live when the server runs a job, and says why a run now failed', async () => {
    await using web = await startWebStack();
    web.llm.push({ text: 'Done.' });
    const session = await web.server.sessions.create({ workerId: web.worker.workerId, name: 'reports' });
    const job = await addJob(web, {
      name: 'weekly report',
      schedule: { cron: '0 9 * * 1', tz: 'Europe/Berlin' },
      prompt: 'Write the weekly report',
      session: session.sessionId,
    });
    const { page, errors } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByTestId('open-scheduled').click();
    const card = page.locator(`[data-testid=cron-job][data-job=${job.jobId}]`);
    await expect(card.getByTestId('cron-schedule').textContent()).resolves.toBe('cron "0 9 * * 1" (Europe/Berlin)');

    // A run the page did not ask for shows in the list as it happens.
    await web.server.cron.runNow(job.jobId);
    await card.locator('[data-testid=cron-runs]', { hasText: /^1$/ }).waitFor();
    await card.locator('[data-testid=cron-last-run]', { hasText: /started|queued/ }).waitFor();

    // Its session deleted, a run now says why it could not run.
    await web.server.sessions.delete(session.sessionId);
    await card.getByTestId('cron-run').click();
    const result = card.locator('[data-testid=cron-run-result][data-outcome=failed]');
    await result.waitFor();
    await expect(result.textContent()).resolves.toContain(`its session ${session.sessionId} no longer exists`);
    await card.locator('[data-testid=cron-last-run]', { hasText: 'failed: its session' }).waitFor();
    // The view that ran it shows the failure: no notice repeats it.
    expect(await page.getByTestId('cron-failure-notice').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('tells of a scheduled run that failed while another view is open, and shows the job failing', async () => {
    await using web = await startWebStack();
    const { page, errors } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await web.worker.close();
    await until(() => web.server.registry.get(web.worker.workerId)?.state !== 'online', 'the worker offline');
    const job = await addJob(web, { name: 'nightly check', schedule: { at: '2s' }, prompt: 'Check the nightly build' });

    // The run fails (the worker is offline) while a session is on screen: a notice says so.
    const notice = page.locator(`[data-testid=cron-failure-notice][data-job=${job.jobId}]`);
    await notice.waitFor();
    await expect(notice.textContent()).resolves.toContain('nightly check');
    await expect(notice.textContent()).resolves.toContain(`worker ${web.worker.workerId} is offline`);
    await expect(page.getByTestId('session-view').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('scheduled-trouble').textContent()).resolves.toContain('1');

    // Opened from the notice, the Scheduled view shows the job failing, with the reason; the notice goes.
    await notice.getByRole('button', { name: 'Open Scheduled' }).click();
    const card = page.locator(`[data-testid=cron-job][data-job=${job.jobId}][data-state=failing]`);
    await card.waitFor();
    await expect(card.getByTestId('cron-state-text').textContent()).resolves.toMatch(
      /^⚠ failing: 1 failure, retried at .* UTC.*is offline/,
    );
    await expect(card.getByTestId('cron-target').textContent()).resolves.toBe('new session per run');
    await until(async () => (await page.getByTestId('cron-failure-notice').count()) === 0, 'the notice dismissed');
    // The job is still failing: the worker's Scheduled entry keeps its mark.
    await expect(page.getByTestId('scheduled-trouble').textContent()).resolves.toContain('1');
    expect(errors).toEqual([]);
  });
});
