import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack } from './web-stack.ts';

const XSS = [
  'Here you go: <img src=x onerror="window.__xss = 1"> and <script>window.__xss = 2</script>',
  '[a link](javascript:window.__xss=3) <a href="javascript:window.__xss=4">b</a>',
  '<iframe src="javascript:window.__xss=5"></iframe><svg onload="window.__xss=6"></svg>',
  '```html\n<img src=x onerror="window.__xss=7">\n```',
].join('\n\n');

describe('the web client with hostile input', () => {
  it('renders markdown with HTML and script from a model answer and a tool output inert', async () => {
    await using web = await startWebStack();
    await writeFile(
      join(web.workdir, 'evil.html'),
      '<img src=x onerror="window.__xss=8"><script>window.__xss=9</script>',
    );
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'evil.html' } }] });
    web.llm.push({ text: XSS });
    const { page, errors } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'show me');
    await page.locator('[data-testid=assistant-message][data-streaming=false]', { hasText: 'Here you go' }).waitFor();
    // The tool's output is on the page, as text.
    await page.getByTestId('tool-card').click();
    await page.getByText('window.__xss=9', { exact: false }).first().waitFor();
    // Give any handler that slipped through the chance to run.
    await page.waitForTimeout(500);
    // Page code as text: the test's own type-check knows no DOM.
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    const dangerous = await page.evaluate(`[...document.querySelectorAll('#root *')].filter(
      (element) =>
        ['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED'].includes(element.tagName) ||
        [...element.attributes].some(
          (attribute) => attribute.name.startsWith('on') || /^\\s*javascript:/i.test(attribute.value),
        ),
    ).length`);
    expect(dangerous).toBe(0);
    // Chromium reports the handlers it met while DOMPurify parsed the answer in an inert document as
    // "blocked by the Content Security Policy": the policy's second wall, not a run handler.
    expect(
      errors.filter(
        (error) => !error.includes('Failed to load resource') && !error.includes('Content Security Policy'),
      ),
    ).toEqual([]);
  });

  it('sends the login form back with a clear message for a wrong token', async () => {
    await using web = await startWebStack();
    const { page } = await web.newPage();
    await page.goto(`${web.server.httpUrl}/#token=molf_c_not-a-real-token-0000000000`);
    await page.getByTestId('login-problem').waitFor();
    await expect(page.getByTestId('login-problem').textContent()).resolves.toMatch(/refused this token/);
    expect(page.url()).not.toContain('molf_c_not');
  });

  it('fits a phone-width screen of 390 px without sideways scrolling', async () => {
    await using web = await startWebStack();
    web.llm.push({
      toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command: `echo ${'long-word-'.repeat(40)}` } }],
    });
    web.llm.push({ text: 'ok' });
    const { page } = await web.newPage({ width: 390, height: 844 });
    await page.goto(web.loginUrl);
    // The side panel is behind the menu button on a phone.
    await page.getByRole('button', { name: 'menu' }).click();
    await openNewSession(page);
    await sendPrompt(page, 'echo');
    await page.getByTestId('approval').waitFor();
    const widths = (await page.evaluate(
      '({ page: document.documentElement.scrollWidth, view: window.innerWidth })',
    )) as { page: number; view: number };
    expect(widths.page).toBeLessThanOrEqual(widths.view);
    await expect(page.getByRole('button', { name: /Allow once/ }).isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('prompt').isVisible()).resolves.toBe(true);
  });
});
