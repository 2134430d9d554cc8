import { MAX_PROMPT_CHARS } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { composeRunPrompt, STDIN_CONTEXT_LINE } from './compose-run-prompt.ts';

describe('the prompt molf run sends', () => {
  it('is the argument alone when nothing is piped, and stdin alone (its trailing blank lines dropped) without an argument', () => {
    expect(composeRunPrompt({ prompt: 'fix it' })).toEqual({ ok: true, value: 'fix it' });
    expect(composeRunPrompt({ stdin: 'fix it\n\n' })).toEqual({ ok: true, value: 'fix it' });
    expect(composeRunPrompt({ prompt: 'fix it', stdin: '  \n' })).toEqual({ ok: true, value: 'fix it' });
  });

  it('puts stdin after the argument in a fence longer than any backtick run in it', () => {
    expect(composeRunPrompt({ prompt: 'review', stdin: 'a `b` ``c``\n`````\n' })).toEqual({
      ok: true,
      value: `review\n\n${STDIN_CONTEXT_LINE}\n\n\`\`\`\`\`\`\na \`b\` \`\`c\`\`\n\`\`\`\`\`\n\`\`\`\`\`\``,
    });
    expect(composeRunPrompt({ prompt: 'review', stdin: 'plain' })).toMatchObject({
      value: expect.stringMatching(/\n```\nplain\n```$/),
    });
  });

  it('is refused without a prompt or stdin, a blank argument counting as none', () => {
    expect(composeRunPrompt({})).toMatchObject({ ok: false, error: expect.stringContaining('no prompt') });
    expect(composeRunPrompt({ prompt: '  ' })).toMatchObject({ ok: false });
  });

  it('is refused when it is longer than the server takes, saying by how much', () => {
    const result = composeRunPrompt({ prompt: 'review', stdin: 'x'.repeat(MAX_PROMPT_CHARS) });
    expect(result).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^the prompt with stdin is 200,0\d\d characters; the server takes at most 200,000$/),
    });
  });
});
