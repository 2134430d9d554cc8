import { describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';
import { createMarkdownStream } from './markdown-stream.ts';
import { createMarkdownRenderer } from './render-markdown.ts';

/** Streams `text` in pieces of `size` characters and collects the blocks in order, the rest last. */
function streamInPieces(text: string, size: number): string[] {
  const stream = createMarkdownStream();
  const blocks: string[] = [];
  for (let index = 0; index < text.length; index += size) blocks.push(...stream.push(text.slice(index, index + size)));
  const rest = stream.finish();
  return rest === '' ? blocks : [...blocks, rest];
}

const ANSWER = [
  '# Plan',
  '',
  'First a paragraph',
  'on two lines.',
  '',
  '- one',
  '- two',
  '',
  '  still item two',
  '',
  '```ts',
  'const a = 1;',
  '',
  'const b = 2;',
  '```',
  'After the code.',
].join('\n');

describe('streamed markdown', () => {
  it('gives each block once it is complete, whatever the pieces it came in', () => {
    const expected = [
      '# Plan\n\n',
      'First a paragraph\non two lines.\n\n',
      '- one\n- two\n\n  still item two\n\n',
      '```ts\nconst a = 1;\n\nconst b = 2;\n```\n',
      'After the code.',
    ];
    for (const size of [1, 3, 7, 1000]) expect(streamInPieces(ANSWER, size)).toEqual(expected);
  });

  it('holds a block back until the line after the blank one shows it is not a continuation', () => {
    const stream = createMarkdownStream();
    expect(stream.push('para\n\n')).toEqual([]);
    expect(stream.pending()).toBe('para\n\n');
    expect(stream.push('  indented')).toEqual([]);
    expect(stream.push('\n\nnext')).toEqual([]);
    expect(stream.push('\n')).toEqual(['para\n\n  indented\n\n']);
    expect(stream.finish()).toBe('next\n');
  });

  it('keeps a blank line inside an open code fence in the block', () => {
    const stream = createMarkdownStream();
    expect(stream.push('```\na\n\nb\n')).toEqual([]);
    expect(stream.push('```\n')).toEqual(['```\na\n\nb\n```\n']);
  });
});

describe('markdown for the terminal', () => {
  it('renders lists, emphasis and code without escape codes when colour is off', () => {
    const render = createMarkdownRenderer(createTerminalStyle(0), 80);
    const text = render('Some **bold** text.\n\n- one\n- two\n\n```js\nconst a = 1;\n```\n');
    expect(text).not.toContain('\u001b[');
    expect(text).toContain('Some bold text.');
    expect(text).toMatch(/\* one\n\s*\* two/);
    expect(text).toContain('const a = 1;');
    expect(text).not.toContain('**');
  });

  it('renders emphasis and code inside the items of a tight list', () => {
    const render = createMarkdownRenderer(createTerminalStyle(1), 80);
    const text = render('- `greet()` now says **Hello**\n- plain');
    expect(text).not.toContain('**');
    expect(text).not.toContain('`');
    expect(text).toContain('\u001b[1mHello\u001b[22m');
  });

  it('highlights a code block by its language and paints emphasis when colour is on', () => {
    const render = createMarkdownRenderer(createTerminalStyle(1), 80);
    const code = render('```js\nconst a = "x";\n```');
    // The keyword and the string are painted apart.
    expect(code).toContain('\u001b[34mconst\u001b[39m');
    expect(code).toContain('\u001b[32m"x"\u001b[39m');
    expect(render('**bold**')).toContain('\u001b[1mbold\u001b[22m');
  });

  it('writes no escape sequence that came from the model', () => {
    const render = createMarkdownRenderer(createTerminalStyle(0), 80);
    expect(render('evil \u001b]0;title\u0007 text\n\n```\n\u001b[2J\n```')).not.toContain('\u001b');
  });
});
