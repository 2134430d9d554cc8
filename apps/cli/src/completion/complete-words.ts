import { Command, type Option } from 'commander';
import { COMMANDS } from '../command-table.ts';

/** One word the shell may put in place of the word being completed, and what it means. */
export type Completion = { value: string; description?: string };

/** What `molf` itself takes before a command. */
const PROGRAM_OPTIONS: readonly Completion[] = [
  { value: '--help', description: 'display help for command' },
  { value: '--version', description: 'output the version number' },
];

function findOption(command: Command, word: string): Option | undefined {
  return command.options.find((option) => option.long === word || option.short === word);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Where the words before the cursor lead: the deepest command they name and how many operands it has. */
function walk(root: Command, words: readonly string[]): { command: Command; operands: number } {
  let command = root;
  let operands = 0;
  let onlyOperands = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] as string;
    if (!onlyOperands && word === '--') {
      onlyOperands = true;
      continue;
    }
    if (!onlyOperands && word.startsWith('-') && word !== '-') {
      const option = word.includes('=') ? undefined : findOption(command, word);
      // `--port 7600`: the value is the option's, not an operand.
      if (option?.required === true) index += 1;
      continue;
    }
    const subcommand =
      operands === 0 && !onlyOperands
        ? command.commands.find((candidate) => candidate.name() === word || candidate.aliases().includes(word))
        : undefined;
    if (subcommand === undefined) operands += 1;
    else command = subcommand;
  }
  return { command, operands };
}

/** What may follow `--option`: its choices, or nothing known (the shell then completes file names). */
function optionValues(option: Option): Completion[] {
  return (option.argChoices ?? []).map((value) => ({ value }));
}

/** The candidates at the cursor inside one command, already registered in full on `root`. */
function completeInCommand(root: Command, before: readonly string[], current: string): Completion[] {
  const { command, operands } = walk(root, before);
  const previous = before.at(-1);
  // `--sandbox=o`: bash splits the word at `=` (COMP_WORDBREAKS), zsh and fish keep it whole.
  if (previous === '=' && before.length >= 2) {
    const option = findOption(command, before.at(-2) as string);
    return option === undefined ? [] : optionValues(option);
  }
  const joined = /^(--[^=]+)=(.*)$/.exec(current);
  if (joined !== null) {
    const option = findOption(command, joined[1] as string);
    return option === undefined ? [] : optionValues(option).map(({ value }) => ({ value: `${joined[1]}=${value}` }));
  }
  const valueOption = previous === undefined ? undefined : findOption(command, previous);
  if (valueOption !== undefined && (valueOption.required || (valueOption.optional && !current.startsWith('-')))) {
    const values = optionValues(valueOption);
    if (valueOption.required || values.length > 0) return values;
  }
  const help = command.createHelp();
  if (current.startsWith('-')) {
    return help.visibleOptions(command).flatMap((option) => {
      const flag = option.long ?? option.short;
      return flag === undefined ? [] : [{ value: flag, description: oneLine(option.description) }];
    });
  }
  const subcommands = operands === 0 ? help.visibleCommands(command) : [];
  if (subcommands.length > 0) {
    return subcommands.map((subcommand) => ({
      value: subcommand.name(),
      description: oneLine(subcommand.description()),
    }));
  }
  const argumentsOf = command.registeredArguments;
  const argument = argumentsOf[operands] ?? (argumentsOf.at(-1)?.variadic === true ? argumentsOf.at(-1) : undefined);
  return (argument?.argChoices ?? []).map((value) => ({ value }));
}

/**
 * The completions of the last of `words` (the words after `molf`, up to and including the one the
 * cursor is in; empty for a new word), for the shell scripts of `molf completion`. The command names
 * come from the command table, so completing one loads nothing; past a command's name only that
 * command's module is loaded, and commander says what it takes (subcommands, options, choices),
 * so completion can never fall behind what the commands register. Candidates are filtered by the
 * prefix typed; none means "no idea", and the scripts then complete file names.
 */
export async function completeWords(words: readonly string[]): Promise<Completion[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const commandIndex = before.findIndex((word) => !word.startsWith('-'));
  const named = commandIndex === -1 ? undefined : before[commandIndex];
  let candidates: Completion[];
  if (named === undefined || (named === 'help' && before.length === commandIndex + 1)) {
    candidates = current.startsWith('-')
      ? named === undefined
        ? [...PROGRAM_OPTIONS]
        : []
      : [
          ...COMMANDS.map((entry) => ({ value: entry.name, description: oneLine(entry.description) })),
          ...(named === undefined ? [{ value: 'help', description: 'display help for command' }] : []),
        ];
  } else {
    const entry = COMMANDS.find((candidate) => candidate.name === named);
    if (entry === undefined) return [];
    const program = new Command('molf');
    (await entry.load())(program);
    const command = program.commands.find((candidate) => candidate.name() === named);
    if (command === undefined) return [];
    candidates = completeInCommand(command, before.slice(commandIndex + 1), current);
  }
  return candidates.filter((candidate) => candidate.value.startsWith(current));
}

/** The lines `molf __complete` prints: `value`, or `value<TAB>description`. */
export function formatCompletions(completions: readonly Completion[]): string {
  return completions
    .map(({ value, description }) =>
      description === undefined || description === '' ? value : `${value}\t${description}`,
    )
    .map((line) => `${line}\n`)
    .join('');
}
