import { describe, expect, it } from 'vitest';
import { MAX_TITLE_CHARS, titleFromAnswer, titleFromPrompt } from './title-text.ts';

describe('a title from the first prompt', () => {
  it.each([
    {
      case: 'a short prompt is its own title',
      prompt: 'Fix the flaky parser test',
      title: 'Fix the flaky parser test',
    },
    {
      case: 'only the first paragraph counts',
      prompt: 'review this\n\nThe following was piped to molf run on stdin:\n\n````\ndiff --git a/x b/x\n````',
      title: 'review this',
    },
    {
      case: 'the lines of one paragraph join on one line',
      prompt: 'hi\nplease   rename\tfoo to bar',
      title: 'hi please rename foo to bar',
    },
    {
      case: 'a long prompt is cut at a word boundary with an ellipsis',
      prompt: 'Refactor the session store so that listing thousands of sessions never parses their histories again',
      title: 'Refactor the session store so that listing thousands of…',
    },
    {
      case: 'a single long word is cut inside',
      prompt: `look at https://example.com/${'a'.repeat(80)}`,
      title: `look at https://example.com/${'a'.repeat(31)}…`,
    },
    {
      case: 'words before a code block are the title',
      prompt: 'why does this fail?\n```ts\nconst x: number = "1";\n```',
      title: 'why does this fail?',
    },
    {
      case: 'a prompt that opens with a code block is named by the words after it',
      prompt: '```\nTypeError: x is undefined\n```\nwhat causes this error',
      title: 'what causes this error',
    },
    {
      case: 'control characters become spaces',
      prompt: 'colour\u001b[31m red\u0007 bell',
      title: 'colour [31m red bell',
    },
  ])('$case', ({ prompt, title }) => {
    expect(titleFromPrompt(prompt)).toBe(title);
  });

  it('never passes the limit, never splits a surrogate pair, never ends in punctuation before the ellipsis', () => {
    const title = titleFromPrompt(`${'😀'.repeat(100)} and more`) ?? '';
    expect(Array.from(title)).toHaveLength(MAX_TITLE_CHARS);
    expect(title).toBe(`${'😀'.repeat(MAX_TITLE_CHARS - 1)}…`);
    expect(titleFromPrompt(`${'word '.repeat(10)}end, ${'x'.repeat(60)}`)).toBe(`${'word '.repeat(10)}end…`);
  });

  it('gives no title to a prompt without words outside code', () => {
    expect(titleFromPrompt('   \n\t')).toBeUndefined();
    expect(titleFromPrompt('```\nonly code\n```')).toBeUndefined();
  });
});

describe("a title from the title model's answer", () => {
  it.each([
    { answer: 'Flaky parser test fix', title: 'Flaky parser test fix' },
    { answer: '"Flaky parser test fix."', title: 'Flaky parser test fix' },
    { answer: '**Title:** Flaky parser test', title: 'Flaky parser test' },
    { answer: 'Title: “Flaky parser”', title: 'Flaky parser' },
    { answer: '# Flaky parser\n\nThis conversation is about…', title: 'Flaky parser' },
    { answer: '\n\n  Flaky parser  \n', title: 'Flaky parser' },
  ])('takes "$title" from $answer', ({ answer, title }) => {
    expect(titleFromAnswer(answer)).toBe(title);
  });

  it('takes nothing from an empty answer', () => {
    expect(titleFromAnswer('  \n "" \n')).toBeUndefined();
  });
});
