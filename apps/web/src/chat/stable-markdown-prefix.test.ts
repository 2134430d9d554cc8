import { describe, expect, it } from 'vitest';
import { createPrefixScanner } from './stable-markdown-prefix.ts';

describe('the complete part of a streaming Markdown answer', () => {
  it('ends after the last blank line: the paragraph still growing is not part of it', () => {
    const scan = createPrefixScanner();
    expect(scan('First para')).toBe(0);
    expect(scan('First paragraph.\n\nSecond')).toBe('First paragraph.\n\n'.length);
    expect(scan('First paragraph.\n\nSecond one.\n\nThird')).toBe('First paragraph.\n\nSecond one.\n\n'.length);
  });

  it('never ends inside a code fence, whose blank lines belong to the code', () => {
    const scan = createPrefixScanner();
    const text = 'Intro.\n\n```js\nconst a = 1;\n\nconst b = 2;\n';
    expect(scan(text)).toBe('Intro.\n\n'.length);
    const closed = `${text}\`\`\`\n\nAfter`;
    expect(scan(closed)).toBe(closed.length - 'After'.length);
  });

  it('starts again for a text that is not the last one grown', () => {
    const scan = createPrefixScanner();
    expect(scan('One.\n\nTwo')).toBe(6);
    expect(scan('Other.\n\n```\n\n')).toBe(8);
  });
});
