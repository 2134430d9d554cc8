import { optionSet, readOptions } from './command-options.ts';
import type { InnerRun } from './inner-run.ts';
import { programName } from './program-name.ts';
import type { ShellWord } from './shell-words.ts';

const NONE: readonly InnerRun[] = [];

/**
 * Command lines a bash builtin runs for the line: a `mapfile -C CALLBACK`, the body of an `alias`
 * (with `expand_aliases` it runs in place of a command name), `compgen -C CMD` and the list of
 * `compgen -W LIST`, which bash expands, substitutions included. Pure: the analyser follows what it
 * returns, in order (see `InnerRun`).
 */
export function builtinCallbacksOf(words: readonly ShellWord[]): readonly InnerRun[] {
  const name = programName((words[0] as ShellWord).value);
  switch (name) {
    case 'mapfile':
    case 'readarray': {
      const found: InnerRun[] = [];
      const read = readOptions(words, { start: 1, withValue: optionSet('-d -n -O -s -u -C -c'), stopAtOperand: false });
      for (const option of read.options) {
        if (option.name !== '-C' || option.value === undefined) continue;
        found.push(
          option.value.isStatic
            ? { type: 'line', source: option.value.value, via: `${name} -C` }
            : { type: 'problem', problem: `${name} -C runs a callback only known when the line runs` },
        );
      }
      return found;
    }
    case 'alias': {
      const found: InnerRun[] = [];
      for (const word of words.slice(1)) {
        const value = /^[^=]+=(.*)$/s.exec(word.value)?.[1];
        if (!word.isStatic || value === undefined) continue;
        found.push(
          { type: 'problem', problem: 'alias defines a command name that runs something else' },
          { type: 'line', source: value, via: 'alias' },
        );
      }
      return found;
    }
    case 'compgen':
    case 'complete': {
      const found: InnerRun[] = [];
      const read = readOptions(words, {
        start: 1,
        withValue: optionSet('-A -C -F -G -W -P -S -X -o'),
        stopAtOperand: false,
      });
      for (const option of read.options) {
        if (option.name !== '-C' && option.name !== '-W') continue;
        if (option.value?.isStatic !== true) {
          found.push({
            type: 'problem',
            problem: `${name} ${option.name} takes a value only known when the line runs, which it runs or expands`,
          });
          continue;
        }
        // `-W` expands its list as the words of a command would be.
        const source = option.name === '-C' ? option.value.value : `: ${option.value.value}`;
        found.push({ type: 'line', source, via: `${name} ${option.name}` });
      }
      return found;
    }
    default:
      return NONE;
  }
}
