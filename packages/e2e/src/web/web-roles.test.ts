import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack, until, type WebStack } from './web-stack.ts';

/** The page's address for `path`, logged in with `token` (as `molf up`'s link does). */
function loginUrlFor(web: WebStack, token: string, path = '/'): string {
  return `${web.server.httpUrl}${path}#token=${token}`;
}

describe('the web client by role', () => {
  it('shows a viewer a read-only page: no prompt box, no session or job buttons, approvals without answers', async () => {
    await using web = await startWebStack();
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'touch viewer-marker' } }] });
    web.llm.push({ text: 'Done.' });
    const session = await web.server.sessions.create({ workerId: web.worker.workerId, name: 'watched' });
    void web.server.agent.prompt({ sessionId: session.sessionId, text: 'make a marker' }).catch(() => {});
    await until(() => web.server.gate.pending({}).length === 1, 'the call to ask for approval');
    const job = await web.server.cron.add(
      { workerId: web.worker.workerId, name: 'nightly', schedule: { every: '1h' }, prompt: 'Check the build' },
      { createdBy: { client: 'web-roles-test' }, defaultTarget: { type: 'new' } },
    );
    const { token } = await web.server.credentials.create({ role: 'viewer', label: 'wall screen' });

    const { page, errors } = await web.newPage();
    await page.goto(loginUrlFor(web, token, `/s/${session.sessionId}`));
    await expect(page.getByTestId('role').textContent()).resolves.toBe('viewer');

    // The session reads as it is, with a note where the prompt box would be.
    const view = page.getByTestId('session-view');
    await view.getByTestId('read-only').waitFor();
    await expect(view.getByTestId('read-only').textContent()).resolves.toContain('Read-only: viewer credential');
    await expect(page.getByTestId('prompt').count()).resolves.toBe(0);
    await expect(page.getByTestId('send').count()).resolves.toBe(0);
    await expect(page.getByTestId('stop').count()).resolves.toBe(0);

    // The approval is shown, without a way to answer it, here and in the drawer.
    const card = view.getByTestId('approval');
    await card.waitFor();
    await expect(card.getByTestId('approval-subject').allTextContents()).resolves.toContain('touch viewer-marker');
    await expect(card.getByTestId('approval-read-only').textContent()).resolves.toContain(
      'an operator or admin can answer',
    );
    await expect(card.getByRole('button').count()).resolves.toBe(0);
    await page.getByTestId('approvals-badge').click();
    const drawer = page.getByTestId('approvals-drawer');
    await drawer.getByTestId('approval-read-only').waitFor();
    await expect(drawer.getByTestId('approval').getByRole('button').count()).resolves.toBe(0);

    // No new session, rename or delete; no rules (reading them is an operator's).
    await page.getByTestId('session-row').first().waitFor();
    await expect(page.getByTestId('new-session').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /^(rename|delete) / }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Permissions' }).count()).resolves.toBe(0);

    // Scheduled prompts are listed without their buttons.
    await page.getByTestId('open-scheduled').click();
    const jobCard = page.locator(`[data-testid=cron-job][data-job=${job.jobId}]`);
    await jobCard.waitFor();
    await expect(jobCard.getByRole('button').count()).resolves.toBe(0);

    expect(web.server.gate.pending({}).length).toBe(1);
    expect(errors).toEqual([]);
  });

  it('offers an operator no "always", saying an admin can, nor a grant revoke; once still answers', async () => {
    await using web = await startWebStack();
    await web.server.permissions.writeText(
      web.worker.workerId,
      '{\n  "*": "ask",\n  "shell_exec": {\n    "*": "ask",\n    "ls *": { "action": "allow", "grant": "g_0123456789abcdef" }\n  }\n}\n',
    );
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'echo operator-ran' } }] });
    web.llm.push({ text: 'Ran it.' });
    const { token } = await web.server.credentials.create({ role: 'operator', label: 'on call' });

    const { page, errors } = await web.newPage();
    await page.goto(loginUrlFor(web, token));
    await expect(page.getByTestId('role').textContent()).resolves.toBe('operator');
    await openNewSession(page);
    await sendPrompt(page, 'run it');
    const card = page.getByTestId('approval');
    await card.waitFor();
    await expect(card.getByTestId('always-needs-admin').textContent()).resolves.toContain('an admin can');
    await expect(card.getByRole('button', { name: /Always/ }).count()).resolves.toBe(0);
    await expect(card.getByRole('button', { name: /This session/ }).count()).resolves.toBe(1);

    // "a" opens no pattern form: the "y" after it answers the card.
    await page.keyboard.press('a');
    await page.keyboard.press('y');
    await page.locator('[data-testid=assistant-message]', { hasText: 'Ran it.' }).waitFor();
    await expect(page.getByTestId('always-patterns').count()).resolves.toBe(0);
    expect((await web.server.permissions.readText(web.worker.workerId)).text).not.toContain('echo');

    // The worker's grants are listed; taking one back is an admin's.
    await page.getByRole('button', { name: 'Permissions' }).click();
    const grant = page.locator('[data-testid=grant][data-grant=g_0123456789abcdef]');
    await grant.waitFor();
    await expect(grant.getByTestId('revoke-needs-admin').textContent()).resolves.toBe('an admin can revoke');
    await expect(grant.getByRole('button', { name: 'Revoke' }).count()).resolves.toBe(0);
    expect(errors).toEqual([]);
  });
});
