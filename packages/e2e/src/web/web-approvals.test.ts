import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack, until } from './web-stack.ts';

/** The text of the tool result the model was sent last. */
function lastToolResult(requests: ReadonlyArray<{ body: unknown }>): string {
  const body = requests[requests.length - 1]?.body as
    | { messages?: Array<{ role: string; content: unknown }> }
    | undefined;
  const messages = body?.messages;
  const tool = [...(messages ?? [])].reverse().find((message) => message.role === 'tool');
  return typeof tool?.content === 'string' ? tool.content : JSON.stringify(tool?.content);
}

describe('approvals in the web client', () => {
  it('shows the exact shell line that asks, and a deny with a reason reaches the model', async () => {
    await using web = await startWebStack();
    web.llm.push({
      toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'rm -rf build && touch marker' } }],
    });
    web.llm.push({ text: 'Understood.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'clean up');
    const card = page.getByTestId('approval');
    await card.waitFor();
    await expect(card.getByTestId('approval-subject').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['rm -rf build', 'touch marker']),
    );
    await expect(page.getByTestId('approvals-badge').textContent()).resolves.toContain('1');
    // The call's own card says it waits.
    await page.locator('[data-testid=tool-card].waiting', { hasText: 'waiting for approval' }).waitFor();
    await page.keyboard.press('n');
    await page.getByTestId('deny-reason').fill('never delete the build folder');
    await page.getByTestId('deny-reason').press('Enter');
    await page.locator('[data-testid=assistant-message]', { hasText: 'Understood.' }).waitFor();
    await expect(card.count()).resolves.toBe(0);
    expect(lastToolResult(web.llm.requests)).toContain('never delete the build folder');
  });

  it('shows why "always" offers only the exact destructive command, and refuses an edit into a wider pattern, saying why', async () => {
    await using web = await startWebStack();
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'rm -rf build' } }] });
    web.llm.push({ text: 'Removed.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'remove the build folder');
    const card = page.getByTestId('approval');
    await card.waitFor();
    const note =
      'rm deletes files for good, so "always" and "session" offer only this exact command, never a wider pattern.';
    await expect(card.getByTestId('always-note').textContent()).resolves.toBe(note);
    await page.keyboard.press('a');
    const patterns = page.getByTestId('always-patterns');
    await expect(patterns.inputValue()).resolves.toBe('rm -rf build');
    // The note stays next to the pattern being edited.
    await expect(card.getByTestId('always-note').isVisible()).resolves.toBe(true);
    await patterns.fill('rm *');
    await page.getByRole('button', { name: 'Save and allow' }).click();
    const refusal = card.getByRole('alert');
    await refusal.waitFor();
    await expect(refusal.textContent()).resolves.toContain(`the pattern "rm *" is not one this approval offers`);
    await expect(refusal.textContent()).resolves.toContain(note);
    expect(web.server.gate.pending({}).length).toBe(1);
    // The offered exact pattern is taken.
    await patterns.fill('rm -rf build');
    await page.getByRole('button', { name: 'Save and allow' }).click();
    await page.locator('[data-testid=assistant-message]', { hasText: 'Removed.' }).waitFor();
    const rules = await web.server.permissions.readText(web.worker.workerId);
    expect(rules.text).toContain('"rm -rf build": {');
    expect(rules.text).not.toContain('"rm *"');
  });

  it('takes an answer given in another browser off the page, saying so', async () => {
    await using web = await startWebStack();
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'touch from-a' } }] });
    web.llm.push({ text: 'Made it.' });
    const a = await web.newPage();
    const b = await web.newPage();
    await a.page.goto(web.loginUrl);
    const sessionId = await openNewSession(a.page);
    await b.page.goto(
      `${web.server.httpUrl}/s/${sessionId}#token=${encodeURIComponent(web.loginUrl.split('#token=')[1] ?? '')}`,
    );
    await b.page.getByTestId('prompt').waitFor();
    await sendPrompt(a.page, 'make a file');
    await a.page.getByTestId('approval').waitFor();
    await b.page.getByTestId('approval').waitFor();
    await a.page.keyboard.press('y');
    await b.page.getByTestId('approval-gone').waitFor();
    await expect(b.page.getByTestId('approval-gone').textContent()).resolves.toContain('another client');
    await until(
      () =>
        b.page
          .getByTestId('approval')
          .count()
          .then((count) => count === 0),
      'the card to go',
    );
    await b.page.locator('[data-testid=assistant-message]', { hasText: 'Made it.' }).waitFor();
    // The page that answered says nothing of the kind.
    await expect(a.page.getByTestId('approval-gone').count()).resolves.toBe(0);
  });

  it('lists approvals of every session in one place, answerable there', async () => {
    await using web = await startWebStack();
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'touch one' } }] });
    web.llm.push({ text: 'Done one.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'first');
    await page.getByTestId('approval').waitFor();
    // Another session on screen: the first one's approval still shows in the badge and the list.
    await openNewSession(page);
    await expect(page.getByTestId('approvals-badge').textContent()).resolves.toContain('1');
    await page.getByTestId('approvals-badge').click();
    const drawer = page.getByTestId('approvals-drawer');
    await drawer.getByTestId('approval-subject').filter({ hasText: 'touch one' }).first().waitFor();
    await drawer.getByRole('button', { name: 'Allow once' }).click();
    await until(() => web.server.gate.pending({}).length === 0, 'the approval to be answered');
    await drawer.getByText('Nothing waits.').waitFor();
  });

  it('saves an edited "always" pattern for an hour: the next matching call runs without asking, until the grant is revoked', async () => {
    await using web = await startWebStack();
    for (const [id, command, answer] of [
      ['c1', 'echo first', 'one'],
      ['c2', 'echo second', 'two'],
      ['c3', 'echo third', 'three'],
      ['c4', 'echo second', 'four'],
    ] as const) {
      web.llm.push({ toolCalls: [{ id, name: 'shell_exec', arguments: { command } }] });
      web.llm.push({ text: answer });
    }
    const { page } = await web.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'say first');
    await page.getByTestId('approval').waitFor();
    await page.keyboard.press('a');
    const patterns = page.getByTestId('always-patterns');
    // The exact pattern that would be saved is shown, and edited before saving.
    await expect(patterns.inputValue()).resolves.toBe('echo *');
    await patterns.fill('echo second*');
    await page.getByLabel('this hour').check();
    await page.getByRole('button', { name: 'Save and allow' }).click();
    await page.locator('[data-testid=assistant-message]', { hasText: 'one' }).waitFor();

    // The edited pattern, not the offered one, was saved: it covers the next call and not the one after.
    await sendPrompt(page, 'say second');
    await page.locator('[data-testid=assistant-message]', { hasText: 'two' }).waitFor();
    expect(web.server.gate.pending({}).length).toBe(0);
    await sendPrompt(page, 'say third');
    await page.getByTestId('approval').waitFor();
    await expect(page.getByTestId('approval-subject').first().textContent()).resolves.toBe('echo third');
    await page.keyboard.press('y');
    await page.locator('[data-testid=assistant-message]', { hasText: 'three' }).waitFor();

    // The grant is listed with its limit, who gave it, from which client and for which call; revoking it brings the question back.
    await page.getByRole('button', { name: 'Permissions' }).click();
    const grant = page.getByTestId('grant').filter({ hasText: 'echo second*' });
    await grant.waitFor();
    const row = (await grant.textContent()) ?? '';
    expect(row).toContain('molf-web');
    expect(row).toContain('echo first');
    expect(row).not.toContain('permanent');
    await grant.getByRole('button', { name: 'Revoke' }).click();
    await until(() => grant.count().then((count) => count === 0), 'the grant to go');
    await page.getByTestId('tab').first().click();
    await sendPrompt(page, 'say second again');
    await page.getByTestId('approval').waitFor();
    await expect(page.getByTestId('approval-subject').first().textContent()).resolves.toBe('echo second');
  });

  it('shows an edit as the worker’s diff against the file, and "e" accepts edits for the session: the next write does not ask', async () => {
    await using web = await startWebStack({ files: { 'notes.txt': 'one\ntwo\nthree\n' } });
    await web.server.permissions.writeText(
      web.worker.workerId,
      '{ "*": "ask", "read_file": "allow", "edit_file": "ask", "write_file": "ask" }',
    );
    web.llm.push({
      toolCalls: [
        { id: 'e1', name: 'edit_file', arguments: { path: 'notes.txt', oldString: 'two', newString: 'TWO' } },
      ],
    });
    web.llm.push({ text: 'Edited.' });
    web.llm.push({ toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'new.txt', content: 'fresh\n' } }] });
    web.llm.push({ text: 'Wrote.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'edit the notes');
    const diff = page.locator('[data-testid=approval] [data-testid=diff][data-source=worker]');
    await diff.waitFor();
    // Lines around the change come from the file itself, which the call's arguments do not hold.
    await expect(diff.locator('.diff-same').allTextContents()).resolves.toEqual([' one', ' three']);
    await expect(diff.locator('.diff-remove').textContent()).resolves.toBe('−two');
    await expect(diff.locator('.diff-add').textContent()).resolves.toBe('+TWO');
    await page.getByRole('button', { name: 'Accept edits for this session' }).waitFor();
    await page.keyboard.press('e');
    await page.locator('[data-testid=assistant-message]', { hasText: 'Edited.' }).waitFor();
    // The call's card shows the diff the tool wrote.
    const card = page.locator('[data-testid=tool-card][data-tool=edit_file]');
    await card.locator('[data-testid=diff][data-source=worker] .diff-add', { hasText: 'TWO' }).waitFor();

    await sendPrompt(page, 'write a new file');
    await page.locator('[data-testid=assistant-message]', { hasText: 'Wrote.' }).waitFor();
    expect(web.server.gate.pending({}).length).toBe(0);
    await expect(readFile(join(web.workdir, 'new.txt'), 'utf8')).resolves.toBe('fresh\n');
  });
});
