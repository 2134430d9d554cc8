import { MAX_PROMPT_CHARS } from '@molf/protocol';

/** The line before piped stdin in a prompt, so that the model knows where that text came from. */
export const STDIN_CONTEXT_LINE = 'The text below was piped to `molf run` on stdin:';

/** A markdown fence longer than any run of backticks in `text`, so that the text cannot close it. */
function fenceFor(text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (match) => match[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * The prompt `molf run` sends: the prompt argument; piped stdin alone when there is no argument;
 * with both, the argument followed by the stdin text as context, fenced, after a line saying it came
 * from stdin. An error (a usage error) when there is neither, or when the result is longer than the
 * server takes.
 */
export function composeRunPrompt(input: {
  prompt?: string | undefined;
  stdin?: string | undefined;
}): { ok: true; value: string } | { ok: false; error: string } {
  const prompt = input.prompt?.trim() === '' ? undefined : input.prompt;
  const stdin = input.stdin?.replace(/\s+$/, '');
  let text: string;
  if (prompt === undefined && (stdin === undefined || stdin === '')) {
    return {
      ok: false,
      error: 'no prompt: give one as the argument (molf run "…") or pipe it on stdin (echo "…" | molf run)',
    };
  }
  if (stdin === undefined || stdin === '') text = prompt as string;
  else if (prompt === undefined) text = stdin;
  else {
    const fence = fenceFor(stdin);
    text = `${prompt}\n\n${STDIN_CONTEXT_LINE}\n\n${fence}\n${stdin}\n${fence}`;
  }
  if (text.length > MAX_PROMPT_CHARS) {
    return {
      ok: false,
      error: `the prompt${stdin === undefined ? '' : ' with stdin'} is ${text.length.toLocaleString('en')} characters; the server takes at most ${MAX_PROMPT_CHARS.toLocaleString('en')}`,
    };
  }
  return { ok: true, value: text };
}
