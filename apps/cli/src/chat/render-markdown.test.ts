import { afterAll, describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';

// A terminal that takes hyperlinks (GNOME Terminal, iTerm2, VS Code…), as marked-terminal asks when it loads.
const before = process.env.FORCE_HYPERLINK;
process.env.FORCE_HYPERLINK = '1';
const { createMarkdownRenderer } = await import('./render-markdown.ts');
afterAll(() => {
  if (before === undefined) delete process.env.FORCE_HYPERLINK;
  else process.env.FORCE_HYPERLINK = before;
});

describe('markdown for the terminal', () => {
  it("shows a link's target next to its text, where the terminal would make the text a link to elsewhere", () => {
    const render = createMarkdownRenderer(createTerminalStyle(0), 100);
    const text = render('Docs: [https://github.com/molf/docs](https://evil.example/steal) here.');
    expect(text).toContain('https://evil.example/steal');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the hyperlink escape is what must not be there
    expect(text).not.toMatch(/\u001b\]8;/);
    expect(render('See <https://example.com/a>.')).toBe('See https://example.com/a.');
  });
});
