import { describe, expect, it } from 'vitest';
import { openNewSession, sendPrompt, startWebStack } from './web-stack.ts';

describe('code in answers', () => {
  it('highlights a fenced block by the language its fence names (an alias too), and one that names none by highlight.js’s guess', async () => {
    await using web = await startWebStack();
    web.llm.push({
      text:
        'A function:\n\n```ts\nexport function twice(value: number): number {\n  return value * 2;\n}\n```\n\n' +
        'And a script:\n\n```\nimport sys\n\ndef main():\n    for line in sys.stdin:\n        print(line.strip())\n```\n',
    });
    const { page, errors } = await web.newPage();
    await page.goto(web.loginUrl);
    await openNewSession(page);
    await sendPrompt(page, 'Show me code.');

    const typed = page.locator('pre code.language-ts');
    await typed.locator('.hljs-keyword').first().waitFor();
    await expect(typed.locator('.hljs-keyword').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['export', 'function', 'return']),
    );
    // One that names none is recognised among the common grammars (which is highlight.js's guess to make).
    const unnamed = page.locator('pre code').nth(1);
    await page.locator('pre code.hljs').nth(1).waitFor();
    await expect(unnamed.getAttribute('class')).resolves.toMatch(/\bhljs\b.*\blanguage-[a-z]+/);
    expect(errors).toEqual([]);
  });
});
