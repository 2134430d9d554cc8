import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack, until } from './web-stack.ts';

describe('the web client workspace', () => {
  it('keeps an unsent prompt across a reload', async () => {
    await using web = await startWebStack();
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await page.getByTestId('prompt').fill('half a thought');
    await page.reload();
    await expect(page.getByTestId('prompt').inputValue()).resolves.toBe('half a thought');
  });

  it('renames a session, and shows two sessions side by side', async () => {
    await using web = await startWebStack();
    const { page } = await web.newPage();
    page.on('dialog', (dialog) => void dialog.accept('Release notes'));
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await page
      .getByTestId('session-row')
      .first()
      .getByRole('button', { name: /^rename/ })
      .click();
    await page.getByTestId('session-row').filter({ hasText: 'Release notes' }).waitFor();
    await openNewSession(page);
    await page.getByRole('button', { name: 'show beside' }).first().click();
    await until(
      () =>
        page
          .getByTestId('session-view')
          .count()
          .then((count) => count === 2),
      'two panes',
    );
  });

  it('explains what a rule decides for a subject', async () => {
    await using web = await startWebStack();
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByRole('button', { name: 'Permissions' }).click();
    await page.getByTestId('rules-text').waitFor();
    await page.getByTestId('explain-subject').fill('git push --force');
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect(page.getByTestId('explanation').textContent()).resolves.toMatch(/ask.*shell_exec/s);
  });

  it('follows the system’s dark setting', async () => {
    await using web = await startWebStack();
    const { page } = await web.newPage();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(web.loginUrl);
    await page.getByTestId('new-session').waitFor();
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(21, 23, 26)');
  });

  it('sends a system notification for an approval while the tab is in the background', async () => {
    await using web = await startWebStack();
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: 'touch x' } }] });
    const { page } = await web.newPage();
    // A recording Notification and a tab the test hides: headless Chromium shows neither.
    await page.addInitScript(`
      window.__notes = [];
      window.Notification = class { constructor(title, options) { window.__notes.push({ title, body: options.body }); } static permission = 'granted'; };
      Object.defineProperty(document, 'hidden', { get: () => window.__hidden === true });
    `);
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'make a file');
    await page.evaluate('window.__hidden = true');
    await until(() => web.server.gate.pending({}).length === 1, 'the approval');
    await page.waitForFunction('window.__notes.length > 0');
    const notes = (await page.evaluate('window.__notes')) as Array<{ title: string; body: string }>;
    expect(notes).toEqual([{ title: 'Molf: shell_exec waits for you', body: 'touch x' }]);
  });

  it('goes back to the login form, saying why, when its token is revoked', async () => {
    await using web = await startWebStack({ serverOptions: { credentialsPollMs: 100 } });
    const { token, credential } = await web.server.credentials.create({ role: 'admin', label: 'laptop' });
    const { page } = await web.newPage();
    await page.goto(`${web.server.httpUrl}/#token=${token}`);
    await page.getByTestId('new-session').waitFor();
    await web.server.credentials.revoke(credential.id);
    await page.getByTestId('login-problem').waitFor();
    await expect(page.getByTestId('login-problem').textContent()).resolves.toMatch(/refused/);
  });

  it('cannot be driven from a page of another origin', async () => {
    await using web = await startWebStack();
    const wsUrl = web.server.url;
    // A hostile page on another port of the same machine tries the server's WebSocket with a valid token.
    const hostile = createHttpServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<script>
        const socket = new WebSocket(${JSON.stringify(wsUrl)});
        socket.onopen = () => { document.title = 'opened'; };
        socket.onclose = () => { if (document.title !== 'opened') document.title = 'refused'; };
      </script>`);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const { page } = await web.newPage();
      await page.goto(`http://127.0.0.1:${(hostile.address() as AddressInfo).port}/`);
      await page.waitForFunction("document.title !== ''");
      expect(await page.title()).toBe('refused');
    } finally {
      hostile.close();
    }
  });
});
