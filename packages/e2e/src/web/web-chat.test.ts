import { describe, expect, it } from 'vitest';
import { startWebStack, until, WEB_TOKENS } from './web-stack.ts';

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
    // The answer keeps the view it streamed into: each update draws what is new, completing it nothing anew.
    await page.evaluate("document.querySelector('[data-testid=assistant-message] .markdown').dataset.mark = 'kept'");
    await page.locator('[data-testid=assistant-message][data-streaming=false]').waitFor();
    await expect(page.getByTestId('assistant-message').textContent()).resolves.toContain('Hello from the fake model.');
    await expect(page.locator('[data-testid=assistant-message] strong').textContent()).resolves.toBe('fake');
    await expect(page.locator('[data-testid=assistant-message] .markdown').getAttribute('data-mark')).resolves.toBe(
      'kept',
    );
  });

  it('draws a streamed answer whole once it is complete when a link reference at its end serves earlier blocks', async () => {
    await using web = await startWebStack();
    web.llm.push({
      text: ['See [the notes][n] ', 'first.\n\n', '- one\n- two\n\n', '[n]: https://example.com/notes\n'],
      chunkDelayMs: 200,
    });
    const { page, errors } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByTestId('new-session').click();
    await page.getByTestId('prompt').fill('Where are the notes?');
    await page.getByTestId('prompt').press('Enter');
    await page.locator('[data-testid=assistant-message][data-streaming=false]').waitFor();
    const link = page.locator('[data-testid=assistant-message] a');
    await expect(link.getAttribute('href')).resolves.toBe('https://example.com/notes');
    await expect(link.textContent()).resolves.toBe('the notes');
    await expect(page.locator('[data-testid=assistant-message] li').count()).resolves.toBe(2);
    expect(errors).toEqual([]);
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
    web.llm.push({ text: ['It starts', ' in', ' main.ts.'], chunkDelayMs: 300 });
    web.llm.push({ text: 'The explorer says: main.ts.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await page.getByTestId('new-session').click();
    await page.getByTestId('prompt').fill('Where does it start?');
    await page.getByTestId('prompt').press('Enter');
    await page.getByTestId('approval').waitFor();
    await page.keyboard.press('y');
    const task = page.locator('[data-testid=tool-card][data-tool=task]');
    // The subagent's answer streams under the call into one view, kept when it completes.
    const streaming = task.locator('[data-testid=assistant-message][data-streaming=true] .markdown');
    await streaming.waitFor();
    await streaming.evaluate((element) => element.setAttribute('data-mark', 'kept'));
    await page.locator('[data-testid=assistant-message]', { hasText: 'The explorer says' }).waitFor();
    await expect(task.locator('[data-testid=assistant-message] .markdown').getAttribute('data-mark')).resolves.toBe(
      'kept',
    );
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
  it('opens a session of 300 messages of every kind at its end, and reads older pages as the reader scrolls up to its start', async () => {
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
    // Older pages asked of the server (a history request with `before`), counted on the socket.
    let pagesRead = 0;
    page.on('websocket', (socket) =>
      socket.on('framesent', (frame) => {
        if (
          typeof frame.payload === 'string' &&
          frame.payload.includes('sessions.get') &&
          frame.payload.includes('"before"')
        ) {
          pagesRead += 1;
        }
      }),
    );
    await page.goto(`${web.loginUrl.split('#')[0]}s/${session.sessionId}#token=${web.loginUrl.split('#token=')[1]}`);
    await page.getByTestId('user-message').filter({ hasText: 'question 99' }).waitFor();
    // Only the last page was read: the start is not in the page yet.
    const question = (turn: number) =>
      page.getByTestId('user-message').filter({ hasText: new RegExp(`^question ${turn}$`) });
    expect(await question(0).count()).toBe(0);
    expect(await page.getByTestId('older-messages').count()).toBe(1);

    // The reader scrolls up with the wheel: older pages come in, and what they see stays in view as they do.
    const box = await page.getByTestId('transcript').boundingBox();
    if (box === null) throw new Error('no transcript');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const inView = (): Promise<string[]> =>
      page.evaluate(`(() => {
        const pane = document.querySelector('[data-testid=transcript]').getBoundingClientRect();
        return [...document.querySelectorAll('.transcript-row')]
          .filter((e) => { const r = e.getBoundingClientRect(); return r.bottom > pane.top && r.top < pane.bottom; })
          .map((e) => e.textContent.slice(0, 60));
      })()`);
    const height = (): Promise<number> =>
      page.evaluate("document.querySelector('[data-testid=transcript]').scrollHeight");
    await until(async () => {
      if ((await question(0).count()) > 0) return true;
      const before = await inView();
      const heightBefore = await height();
      await page.mouse.wheel(0, -250);
      await page.waitForTimeout(100);
      // A page of 33 turns came in above (a row measured anew changes the height far less).
      if ((await height()) > heightBefore + 2_000) {
        const after = await inView();
        expect(
          after.filter((text) => before.includes(text)),
          `in view before: ${before}; after: ${after}`,
        ).not.toEqual([]);
      }
      return false;
    }, 'the first message after scrolling up');
    expect(pagesRead).toBe(2);
    await question(0).waitFor();
    await until(async () => (await page.getByTestId('older-messages').count()) === 0, 'no earlier messages left');
    expect(errors).toEqual([]);
  });
});
