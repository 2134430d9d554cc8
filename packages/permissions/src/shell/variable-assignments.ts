/**
 * Environment variables known to be harmless to set for a command: they change language, time zone,
 * colours, terminal size or verbosity, never which program runs, what it loads or where it writes.
 * Every other name set for a command (`GIT_EXTERNAL_DIFF=…`, `HOME=…`, `LD_PRELOAD=…`) makes the line
 * ask: programs read far too many variables for a deny-list to know them all.
 */
export const HARMLESS_VARIABLES: readonly string[] = [
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'NO_COLOR',
  'FORCE_COLOR',
  'CLICOLOR',
  'CLICOLOR_FORCE',
  'COLORTERM',
  'TERM',
  'COLUMNS',
  'LINES',
  'CI',
  'NODE_ENV',
  'RUST_BACKTRACE',
  'RUST_LOG',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'GIT_TERMINAL_PROMPT',
  'DEBIAN_FRONTEND',
];

/** Values each harmless variable may take: a locale or terminal name is never a path. */
const LOCALE_VALUE = /^[A-Za-z0-9_.@:-]*$/;
const NAME_VALUE = /^[A-Za-z0-9_.+-]*$/;
const PLAIN_VALUE = /^[^\n\0]*$/;

function valuePattern(name: string): RegExp | undefined {
  if (name === 'LANG' || name === 'LANGUAGE' || name.startsWith('LC_')) return LOCALE_VALUE;
  if (name === 'TERM') return NAME_VALUE;
  return HARMLESS_VARIABLES.includes(name) ? PLAIN_VALUE : undefined;
}

/**
 * Lower-case names a shell variable may take without reaching a program: lower case is the
 * convention for shell-local variables, and the few lower-case names programs do read (proxies) are
 * excluded.
 */
const SHELL_LOCAL_NAME = /^[a-z_][a-z0-9_]*$/;
const LOWER_CASE_ENVIRONMENT = new Set(['http_proxy', 'https_proxy', 'ftp_proxy', 'all_proxy', 'no_proxy']);

export type Assignment = {
  name: string;
  /** The value when known before the line runs; undefined when it is not (or there is none). */
  value: string | undefined;
  /** Whether a value was given at all (`export NAME` has none). */
  hasValue: boolean;
  /**
   * `environment`: it reaches the programs the line starts (`NAME=v cmd`, `env NAME=v`, `export`,
   * `declare -x`); `shell`: it sets a shell variable (`NAME=v;`, `for NAME in`, `read NAME`), which
   * reaches programs only when that name is already exported.
   */
  reach: 'environment' | 'shell';
};

/** Why setting this variable can change what the line does, or undefined when it cannot. */
export function judgeAssignment(assignment: Assignment): string | undefined {
  const { name, reach } = assignment;
  if (reach === 'shell' && SHELL_LOCAL_NAME.test(name) && !LOWER_CASE_ENVIRONMENT.has(name)) return undefined;
  const allowedValues = valuePattern(name);
  if (allowedValues === undefined) {
    return (
      `it sets ${name}, which can change what a program runs, loads or writes ` +
      `(only ${HARMLESS_VARIABLES.join(', ')} are known to be harmless)`
    );
  }
  if (!assignment.hasValue) return undefined;
  if (assignment.value === undefined) return `it sets ${name} to a value only known when the line runs`;
  if (!allowedValues.test(assignment.value)) return `it sets ${name} to an unusual value`;
  return undefined;
}

/** `set -a`, `set -o allexport`, `set -k`: every later assignment reaches the programs. */
export function setExportsAssignments(words: readonly string[]): boolean {
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index] as string;
    if (/^-[A-Za-z]*[ak]/.test(word) && !word.startsWith('--')) return true;
    if ((word === '-o' || word === '+o') && /^(allexport|keyword)$/.test(words[index + 1] ?? '')) {
      return word === '-o';
    }
  }
  return false;
}
