import { describe, expect, it } from 'vitest';
import { startWebStack, WEB_TOKENS } from './web-stack.ts';

describe('the web client', () => {
  it('logs in from the printed link, drops the token from the address bar and shows the worker online', async () => {
    await using web = await startWebStack();
    const { page, errors } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByTestId('worker-row').filter({ hasText: 'web-test' }).waitFor();
    await expect(page.getByTestId('worker-row').first().textContent()).resolves.toContain('online');
    expect(page.url()).not.toContain(WEB_TOKENS.client);
    expect(page.url()).not.toContain('#');
    // A reload logs in again from this browser's storage.
    await page.reload();
    await page.getByTestId('worker-row').first().waitFor();
    expect(errors).toEqual([]);
  });

  it('streams an answer as it comes', async () => {
    await using web = await startWebStack();
    web.llm.push({ text: ['Hello', ' from', ' the', ' **fake**', ' model.'], chunkDelayMs: 300 });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByTestId('new-session').click();
    await page.getByTestId('prompt').fill('Say hello');
    await page.getByTestId('prompt').press('Enter');
    await page.getByTestId('user-message').filter({ hasText: 'Say hello' }).waitFor();
    // Part of the answer shows while the rest is still coming.
    await page.locator('[data-testid=assistant-message][data-streaming=true]').waitFor();
    const partial = await page.getByTestId('assistant-message').textContent();
    expect(partial?.length).toBeLessThan('Hello from the fake model.'.length);
    await page.locator('[data-testid=assistant-message][data-streaming=false]').waitFor();
    await expect(page.getByTestId('assistant-message').textContent()).resolves.toContain('Hello from the fake model.');
    await expect(page.locator('[data-testid=assistant-message] strong').textContent()).resolves.toBe('fake');
  });
});

describe('the web client with subagents', () => {
  it('nests a subagent’s work under its task call', async () => {
    await using web = await startWebStack();
    web.llm.push({
      toolCalls: [
        {
          id: 't1',
          name: 'task',
          arguments: { agent: 'explore', description: 'find the entry point', prompt: 'Where does it start?' },
        },
      ],
    });
    web.llm.push({ toolCalls: [{ id: 'g1', name: 'glob', arguments: { pattern: '*.ts' } }] });
    web.llm.push({ text: 'It starts in main.ts.' });
    web.llm.push({ text: 'The explorer says: main.ts.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByTestId('new-session').click();
    await page.getByTestId('prompt').fill('Where does it start?');
    await page.getByTestId('prompt').press('Enter');
    await page.getByTestId('approval').waitFor();
    await page.keyboard.press('y');
    await page.locator('[data-testid=assistant-message]', { hasText: 'The explorer says' }).waitFor();
    const task = page.locator('[data-testid=tool-card][data-tool=task]');
    const nested = task.getByTestId('subagent');
    await nested.waitFor();
    await nested.locator('[data-testid=tool-card][data-tool=glob]').waitFor();
    await expect(nested.getByTestId('assistant-message').textContent()).resolves.toContain('It starts in main.ts.');

    // Opened again later, the finished task shows its subagent's work on demand, from its session.
    await page.reload();
    await page.locator('[data-testid=assistant-message]', { hasText: 'The explorer says' }).waitFor();
    await page.locator('[data-testid=tool-card][data-tool=task]').getByTestId('subagent-history').click();
    const history = page.locator('[data-testid=tool-card][data-tool=task]').getByTestId('subagent');
    await history.locator('[data-testid=tool-card][data-tool=glob]').waitFor();
    await expect(history.getByTestId('assistant-message').textContent()).resolves.toContain('It starts in main.ts.');
  });
});

describe('the web client with a long history', () => {
  it('opens a session of 300 messages of every kind at its end, and shows its start when scrolled up', async () => {
    await using web = await startWebStack();
    const session = await web.server.sessions.create({ workerId: web.worker.workerId, name: 'long' });
    const at = new Date().toISOString();
    for (let turn = 0; turn < 100; turn += 1) {
      await web.server.sessions.append(session.sessionId, {
        id: `u${turn}`,
        at,
        role: 'user',
        text: `question ${turn}`,
      });
      await web.server.sessions.append(session.sessionId, {
        id: `a${turn}`,
        at,
        role: 'assistant',
        // Heights that differ a lot: rows are measured and their slots reused for items of other kinds.
        text:
          turn % 3 === 0
            ? `## Step ${turn}\n\n${'- a point\n'.repeat(12)}\n\`\`\`ts\n${'const x = 1;\n'.repeat(20)}\`\`\``
            : `Answer **${turn}**`,
        model: 'fake/m',
        toolCalls: [{ toolCallId: `c${turn}`, toolName: 'glob', args: { pattern: `*.${turn}` } }],
      });
      await web.server.sessions.append(session.sessionId, {
        id: `r${turn}`,
        at,
        role: 'tool',
        toolCallId: `c${turn}`,
        toolName: 'glob',
        output: Array.from({ length: turn % 4 === 0 ? 24 : 1 }, (_, line) => `file${turn}-${line}`).join('\n'),
      });
    }
    const { page, errors } = await web.newPage();
    await page.goto(`${web.loginUrl.split('#')[0]}s/${session.sessionId}#token=${web.loginUrl.split('#token=')[1]}`);
    await page.getByTestId('user-message').filter({ hasText: 'question 99' }).waitFor();
    await page.evaluate("document.querySelector('[data-testid=transcript]').scrollTop = 0");
    await page
      .getByTestId('user-message')
      .filter({ hasText: /^question 0$/ })
      .waitFor();
    expect(errors).toEqual([]);
  });
});
