import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack } from './web-stack.ts';

/** A 40×30 red PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACgAAAAeCAIAAADRv8uKAAAAKklEQVR4nO3NMQ0AAAgDsAmb/yALGXA06d9MeyJisVgsFovFYrFYLP4bL9HP3Ew1mJ9PAAAAAElFTkSuQmCC',
  'base64',
);

describe('tool results in the web client', () => {
  it('renders a 5 MB shell output collapsed, and the whole of it on demand without filling the page', async () => {
    await using web = await startWebStack();
    const command = "head -c 5000000 /dev/zero | tr '\\0' x | fold -w 99";
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'shell_exec', arguments: { command } }] });
    web.llm.push({ text: 'That was long.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'print a lot');
    await page.getByTestId('approval').waitFor();
    await page.keyboard.press('y');
    await page.locator('[data-testid=assistant-message]', { hasText: 'That was long.' }).waitFor();
    const card = page.locator('[data-testid=tool-card][data-tool=shell_exec]');
    await card.locator('.tool-head').click();
    const full = card.getByTestId('full-output');
    await full.getByRole('button', { name: /Full output \(4\.8 MB\)/ }).click();
    await full.getByRole('button', { name: /Show all \(4\.8 MB, 50\d\d\d lines\)/ }).click();
    const view = full.getByTestId('virtual-output');
    await view.waitFor();
    // Only the lines in sight are in the page.
    expect(await view.locator('.virtual-line').count()).toBeLessThan(200);
    // Page code as text: the test's own type-check knows no DOM.
    await page.evaluate(
      "(() => { const view = document.querySelector('[data-testid=virtual-output]'); view.scrollTop = view.scrollHeight; })()",
    );
    // The last line (5,000,000 = 50,505 × 99 + 5) comes into the page once scrolled to.
    await view.locator('.virtual-line', { hasText: /^x{5}$/ }).waitFor();
    expect(await view.locator('.virtual-line').count()).toBeLessThan(200);
    expect(Number(await page.evaluate('document.getElementsByTagName("*").length'))).toBeLessThan(3_000);
  });

  it('shows an image a tool read', async () => {
    await using web = await startWebStack({ files: { 'red.png': PNG } });
    web.llm.push({ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'red.png' } }] });
    web.llm.push({ text: 'A red square.' });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'look at red.png');
    await page.locator('[data-testid=assistant-message]', { hasText: 'A red square.' }).waitFor();
    await page.getByTestId('tool-card').first().locator('.tool-head').click();
    const image = page.getByTestId('attachment').locator('img');
    await image.waitFor();
    await page.waitForFunction("document.querySelector('[data-testid=attachment] img').naturalWidth > 0");
    expect(await page.evaluate("document.querySelector('[data-testid=attachment] img').naturalWidth")).toBe(40);
  });

  it('shows each MCP server of a worker with its state and why', async () => {
    const mcp = { mcpServers: { broken: { command: 'molf-no-such-command' } } };
    await using web = await startWebStack({ files: { '.mcp.json': JSON.stringify(mcp) } });
    const { page } = await web.newPage();
    await page.goto(web.loginUrl);
    const server = page.getByTestId('mcp-server').filter({ hasText: 'broken' });
    await server.waitFor();
    await expect(server.getAttribute('data-status')).resolves.toMatch(/awaiting_approval|offline/);
  });
});
