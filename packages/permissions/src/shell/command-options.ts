import type { ShellWord } from './shell-words.ts';

/** The sets made so far: the lists are the tables' constants, read for every command of every line. */
const OPTION_SETS = new Map<string, ReadonlySet<string>>();
const EMPTY: ReadonlySet<string> = new Set();

/** A set of option names from a space-separated list: `'-o --output'`. */
export function optionSet(list: string | undefined): ReadonlySet<string> {
  if (list === undefined || list === '') return EMPTY;
  let set = OPTION_SETS.get(list);
  if (set === undefined) {
    set = new Set(list.split(/\s+/).filter((option) => option !== ''));
    // Lists come from the tables and from option values read off lines: keep the cache bounded.
    if (OPTION_SETS.size < 4_096) OPTION_SETS.set(list, set);
  }
  return set;
}

/**
 * How many words an option takes: 2 when it, or the last of a cluster of short options
 * (`sudo -nu bob`), takes the next word as its value; `-ubob` and `--user=bob` carry theirs.
 */
export function optionWidth(value: string, withValue: ReadonlySet<string>): number {
  if (value.startsWith('--')) return !value.includes('=') && withValue.has(value) ? 2 : 1;
  if (withValue.has(value)) return 2;
  const valueAt = [...value.slice(1)].findIndex((char) => withValue.has(`-${char}`));
  return valueAt !== -1 && valueAt === value.length - 2 ? 2 : 1;
}

/** One option of a command line and its value, if it takes one. */
export type ParsedOption = {
  /** The option as named in a spec: `-o`, `--output`. For a cluster, each short option in turn. */
  name: string;
  /** The value word (`--output=x`, `-ox`, `-o x`); undefined when it takes none or it is missing. */
  value: ShellWord | undefined;
};

/**
 * Reads a command's words into options and operands. `withValue` names the options that take a value;
 * unknown options are flags. Options end at `--` or, when `stopAtOperand`, at the first operand (the
 * command of a wrapper). A word only known at run time is an operand.
 */
/**
 * GNU and git programs accept any unambiguous prefix of a long option (`--outp=x` is `--output=x`):
 * a prefix of one known option is read as that option. Several candidates are read as the first
 * that takes a value, the one that matters for which words are files. A prefix may also be a flag
 * of its own the tables do not list, so its separate value word is kept as a word too.
 */
function fullLongName(name: string, withValue: ReadonlySet<string>, flags: ReadonlySet<string>): string {
  if (withValue.has(name) || flags.has(name) || name.length < 3) return name;
  let flag: string | undefined;
  for (const option of withValue) if (option.startsWith(name)) return option;
  for (const option of flags) if (option.startsWith(name)) flag ??= option;
  return flag ?? name;
}

export function readOptions(
  words: readonly ShellWord[],
  spec: {
    start: number;
    withValue: ReadonlySet<string>;
    stopAtOperand: boolean;
    /** Long options that take no value, for reading abbreviations (`--ext` of `--ext-diff`). */
    flags?: ReadonlySet<string>;
  },
): { options: ParsedOption[]; operands: ShellWord[]; operandsStart: number } {
  const flags = spec.flags ?? EMPTY;
  const options: ParsedOption[] = [];
  const operands: ShellWord[] = [];
  let operandsStart = -1;
  let index = spec.start;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    const text = word.value;
    if (!word.isStatic || !text.startsWith('-') || text === '-') {
      if (operandsStart === -1) operandsStart = index;
      if (spec.stopAtOperand) break;
      operands.push(word);
      index += 1;
      continue;
    }
    if (text === '--') {
      index += 1;
      if (operandsStart === -1) operandsStart = index;
      if (!spec.stopAtOperand) operands.push(...words.slice(index));
      index = words.length;
      break;
    }
    if (text.startsWith('--')) {
      const equals = text.indexOf('=');
      const name = fullLongName(equals === -1 ? text : text.slice(0, equals), spec.withValue, flags);
      if (equals !== -1) {
        options.push({ name, value: { ...word, value: text.slice(equals + 1) } });
        index += 1;
      } else if (spec.withValue.has(name)) {
        options.push({ name, value: words[index + 1] });
        // An abbreviation may also be a flag Molf does not know (`parallel --tag` is no
        // `--tag-string`): its value is then read as the next word as well, not taken from it.
        index += name === text ? 2 : 1;
      } else {
        options.push({ name, value: undefined });
        index += 1;
      }
      continue;
    }
    // A one-dash long option some commands use (`openssl -in FILE`, `zip -TT CMD`, `go vet -vettool=X`).
    if (spec.withValue.has(text)) {
      options.push({ name: text, value: words[index + 1] });
      index += 2;
      continue;
    }
    const equals = text.indexOf('=');
    if (equals > 2 && spec.withValue.has(text.slice(0, equals))) {
      options.push({ name: text.slice(0, equals), value: { ...word, value: text.slice(equals + 1) } });
      index += 1;
      continue;
    }
    // A cluster of short options: the first that takes a value takes the rest of the word or the next.
    let consumedNext = false;
    for (let at = 1; at < text.length; at += 1) {
      const name = `-${text[at]}`;
      // Options are letters and digits: the rest is an optional value attached to the one before
      // (`nsenter -m/proc/1/ns/mnt`), never more options.
      if (!/[A-Za-z0-9]/.test(text[at] as string)) {
        const previous = options.at(-1);
        if (at > 1 && previous !== undefined) previous.value = { ...word, value: text.slice(at) };
        break;
      }
      if (spec.withValue.has(name)) {
        const attached = text.slice(at + 1);
        if (attached !== '') options.push({ name, value: { ...word, value: attached } });
        else {
          options.push({ name, value: words[index + 1] });
          consumedNext = true;
        }
        break;
      }
      options.push({ name, value: undefined });
    }
    index += consumedNext ? 2 : 1;
  }
  if (operandsStart === -1) operandsStart = words.length;
  if (spec.stopAtOperand) operands.push(...words.slice(operandsStart));
  return { options, operands, operandsStart };
}
