import { programName } from './program-name.ts';
import type { ShellWord } from './shell-words.ts';
import { INTERPRETERS, SHELL_OPTIONS_WITH_VALUE, SHELLS } from './wrapper-tables.ts';

/**
 * Whether a shell reads its program from standard input, as bash reads its options: only `-c`
 * gives it one and a first operand names a script; `-s` reads standard input whatever follows,
 * and `-o`/`-O`/`--rcfile` take a value (`bash -e -o pipefail <<< '…'` reads the here-string).
 */
function shellReadsStdin(words: readonly ShellWord[]): boolean {
  let index = 1;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (!word.isStatic) return false;
    const value = word.value;
    if (value === '--' || value === '-') return index + 1 >= words.length;
    if (!/^[-+]/.test(value)) return false;
    if (SHELL_OPTIONS_WITH_VALUE.has(value)) {
      index += 2;
      continue;
    }
    if (!value.startsWith('--')) {
      if (value.slice(1).includes('c')) return false;
      if (value.slice(1).includes('s')) return true;
    } else if (value === '--command') {
      return false;
    }
    index += 1;
  }
  return true;
}

/** Files that are a pipe from the line itself: what a program reads from them is made when it runs. */
const PIPE_FILE = /^(\/dev\/(stdin|fd\/\d+)|\/proc\/(self|thread-self|\d+)\/fd\/\d+)$/;

/**
 * Whether a shell, an interpreter or `source` would run a program read from a pipe named as its
 * script: `source <(curl …)`, `bash <(echo …)`, `. /dev/stdin <<< '…'`, `python3 /dev/fd/3`.
 */
export function runsProgramFromPipe(words: readonly ShellWord[]): boolean {
  const name = programName((words[0] as ShellWord).value);
  if (!SHELLS.has(name) && !INTERPRETERS.has(name) && name !== 'source' && name !== '.') return false;
  return words
    .slice(1)
    .some((word) => word.processSubstitution === true || (word.isStatic && PIPE_FILE.test(word.value)));
}

/**
 * Whether an interpreter or shell would read its program from standard input (no script, no
 * `-c`/`-e`): then no pattern can describe what it runs.
 */
export function readsProgramFromStdin(words: readonly ShellWord[]): boolean {
  const name = programName((words[0] as ShellWord).value);
  if (SHELLS.has(name) && name !== 'busybox') return shellReadsStdin(words);
  if (!INTERPRETERS.has(name)) return false;
  return words
    .slice(1)
    .every(
      (word) =>
        word.isStatic &&
        word.value.startsWith('-') &&
        !/^-[A-Za-z]*[ceEm]/.test(word.value) &&
        word.value !== '--command',
    );
}
