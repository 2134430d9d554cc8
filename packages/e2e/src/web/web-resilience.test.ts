import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack, until } from './web-stack.ts';

const CHUNKS = Array.from({ length: 24 }, (_, index) => `word${index} `);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the web client when things go wrong', () => {
  it('shows every event of a turn once after a reload in the middle of it', async () => {
    await using web = await startWebStack();
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'glob', arguments: { pattern: '*.md' } }] });
    web.llm.push({ text: CHUNKS, chunkDelayMs: 250 });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'find the docs');
    await page.locator('[data-testid=assistant-message][data-streaming=true]', { hasText: 'word2' }).waitFor();
    await page.reload();
    await page.locator('[data-testid=assistant-message][data-streaming=false]').waitFor();
    await expect(page.getByTestId('user-message').count()).resolves.toBe(1);
    await expect(page.getByTestId('tool-card').count()).resolves.toBe(1);
    const answers = await page.getByTestId('assistant-message').allTextContents();
    expect(answers.map((text) => text.trim())).toEqual([CHUNKS.join('').trim()]);
  });

  it('stops a long shell command with Stop: its process is gone', async () => {
    await using web = await startWebStack();
    web.llm.push({
      toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'echo $$ > sleeper.pid; exec sleep 300' } }],
    });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'wait a while');
    await page.getByTestId('approval').waitFor();
    await page.keyboard.press('y');
    let pid = 0;
    await until(async () => {
      pid = Number(await readFile(join(web.workdir, 'sleeper.pid'), 'utf8').catch(() => '0'));
      return pid > 0;
    }, 'the command to start');
    expect(isAlive(pid)).toBe(true);
    await page.getByTestId('stop').click();
    await until(() => !isAlive(pid), 'the command to be killed');
    await page.locator('[data-testid=tool-card][data-status=cancelled]').waitFor();
    await page.getByText('Stopped.').waitFor();
  });

  it('says when the server is gone, reconnects by itself and carries on', async () => {
    await using web = await startWebStack();
    web.llm.push({ text: 'before' });
    web.llm.push({ text: 'after' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'one');
    await page.locator('[data-testid=assistant-message]', { hasText: 'before' }).waitFor();
    await web.stopServer();
    await page.locator('[data-testid=link-state][data-state=reconnecting]').waitFor();
    await web.startServerAgain();
    await page.locator('[data-testid=link-state][data-state=connected]').waitFor();
    await until(() => web.server.registry.list().some((worker) => worker.state === 'online'), 'the worker back');
    await sendPrompt(page, 'two');
    await page.locator('[data-testid=assistant-message]', { hasText: 'after' }).waitFor();
    await expect(page.getByTestId('user-message').allTextContents()).resolves.toEqual(['one', 'two']);
  });

  it('tells a page that its session was deleted in another one', async () => {
    await using web = await startWebStack();
    const a = await web.newPage();
    const b = await web.newPage();
    await a.page.goto(web.loginUrl);
    const sessionId = await openNewSession(a.page);
    await b.page.goto(web.loginUrl);
    b.page.on('dialog', (dialog) => void dialog.accept());
    const row = b.page.getByTestId('session-row').first();
    await row.waitFor();
    await row.getByRole('button', { name: /^delete/ }).click();
    await until(async () => (await web.server.sessions.get(sessionId)) === undefined, 'the session to be deleted');
    await a.page.getByTestId('session-problem').waitFor();
    await expect(a.page.getByTestId('session-problem').textContent()).resolves.toContain('deleted');
  });

  it('shows a worker going offline in the middle of a turn: the call ends, the session says so', async () => {
    // A worker that closes reports its cancelled calls; one too slow to (or killed) is given up
    // after the offline window, shortened here from its minute.
    await using web = await startWebStack({ serverOptions: { workerOfflineWindowMs: 3_000 } });
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'sleep 300' } }] });
    web.llm.push({ text: 'The worker went away.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'wait');
    await page.getByTestId('approval').waitFor();
    await page.keyboard.press('y');
    await page.locator('[data-testid=tool-card][data-status=running]').waitFor();
    await web.worker.close();
    await page
      .locator('[data-testid=tool-card][data-status=failed], [data-testid=tool-card][data-status=cancelled]')
      .waitFor();
    await page.getByText('worker offline').first().waitFor();
    await page.locator('[data-testid=worker-row]', { hasText: 'offline' }).waitFor();
  });
});
