import { createInterface } from 'node:readline/promises';

/**
 * A yes/no question to the person at the terminal, or undefined when there is none (a pipe, CI,
 * a daemon's log): then nothing may be decided on a person's behalf. Anything but y/yes is a no.
 */
export function askOnTerminal(
  streams: { input: NodeJS.ReadStream; output: NodeJS.WriteStream } = { input: process.stdin, output: process.stderr },
): ((question: string) => Promise<boolean>) | undefined {
  if (streams.input.isTTY !== true || streams.output.isTTY !== true) return undefined;
  return async (question) => {
    const prompt = createInterface({ input: streams.input, output: streams.output });
    try {
      return /^y(es)?$/i.test((await prompt.question(question)).trim());
    } finally {
      prompt.close();
    }
  };
}
