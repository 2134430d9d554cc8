/**
 * The README's screenshots, taken from a real session: a chat with a tool card, an approval, and a
 * diff under review. `MOLF_SCREENSHOTS=1` writes them to docs/screenshots; otherwise to a temporary
 * directory, so that the suite checks they can be taken without changing the checkout.
 */
import { mkdir, mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack } from './web-stack.ts';

const DOCS = fileURLToPath(new URL('../../../../docs/screenshots/', import.meta.url));

describe('the README screenshots', () => {
  it('shows a chat with a tool card, an approval and a diff', async () => {
    const out = process.env.MOLF_SCREENSHOTS === '1' ? DOCS : await mkdtemp(join(tmpdir(), 'molf-shots-'));
    await mkdir(out, { recursive: true });
    await using web = await startWebStack();
    await writeFile(join(web.workdir, 'README.md'), '# Demo\n\nA small project.\n');
    await writeFile(join(web.workdir, 'package.json'), '{\n  "name": "demo",\n  "version": "1.0.0"\n}\n');
    web.llm.push({ toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'README.md' } }] });
    web.llm.push({
      text: 'The README has a title and one line. To run the tests:\n\n```sh\nnpm test\n```\n\nShall I add a **test script**?',
    });
    web.llm.push({
      toolCalls: [{ id: 's1', name: 'shell_exec', arguments: { command: 'npm test -- --watch=false' } }],
    });
    web.llm.push({ text: 'Tests pass.' });
    web.llm.push({
      toolCalls: [
        {
          id: 'e1',
          name: 'edit_file',
          arguments: {
            path: 'package.json',
            oldString: '  "version": "1.0.0"\n',
            newString: '  "version": "1.0.0",\n  "scripts": { "test": "node --test" }\n',
          },
        },
      ],
    });
    web.llm.push({ text: 'Added.' });

    const { page } = await web.newPage({ width: 1200, height: 760 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'What does the README say?');
    await page.locator('[data-testid=assistant-message][data-streaming=false]', { hasText: 'Shall I add' }).waitFor();
    await page.getByTestId('tool-card').first().click();
    await page.locator('.hljs').first().waitFor();
    await page.screenshot({ path: join(out, 'chat.png') });

    await sendPrompt(page, 'Run the tests');
    await page.getByTestId('approval').waitFor();
    await page.screenshot({ path: join(out, 'approval.png') });
    await page.keyboard.press('y');
    await page.locator('[data-testid=assistant-message]', { hasText: 'Tests pass.' }).waitFor();

    await sendPrompt(page, 'Add a test script');
    await page.getByTestId('approval').getByTestId('diff').waitFor();
    await page.locator('[data-testid=approval] .diff-add').first().waitFor();
    await page.getByTestId('approval').screenshot({ path: join(out, 'diff.png') });

    for (const name of ['chat.png', 'approval.png', 'diff.png']) {
      expect((await stat(join(out, name))).size).toBeGreaterThan(10_000);
    }
  });
});
