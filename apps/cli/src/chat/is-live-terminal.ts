/**
 * Whether `molf chat` can draw its live region and take keys one by one: stdin and stdout are a
 * terminal, and one that moves its cursor. `TERM=dumb` (Emacs' shell and compile buffers, some CI
 * consoles) shows cursor moves and erases as text: the chat reads lines there, as on a pipe.
 */
export function isLiveTerminal(
  stdin: { isTTY?: boolean },
  stdout: { isTTY?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return stdin.isTTY === true && stdout.isTTY === true && env.TERM !== 'dumb';
}
