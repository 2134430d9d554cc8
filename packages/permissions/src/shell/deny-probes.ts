import { analyzeShellLine, type ShellAnalysisLimits, type SimpleCommand } from './analyze-shell-line.ts';
import { isKnownPlainCommand } from './command-arity.ts';
import { FILE_COMMANDS } from './file-arguments.ts';
import { programName } from './program-name.ts';
import type { ShellParser } from './shell-parser.ts';
import { renderWords } from './shell-words.ts';

/** At most this many probes per command: a line of many words stays cheap. */
const MAX_PROBES = 64;
/** Words per probe: enough for any rule's prefix, and a long line stays cheap. */
const PROBE_WORDS = 32;
/** Words longer than this are not parsed as command lines. */
const MAX_PAYLOAD_CHARS = 4_096;

/**
 * Commands an unknown program may run: every tail of its words that starts with a plain word
 * (`mywrapper --x rm -rf y` may run `rm -rf y`), and every argument that reads like a command line
 * (`mywrapper -c 'rm -rf y'`). They are only checked for deny, whatever the command's own verdict:
 * an unknown wrapper keeps its allow or ask, but a deny found anywhere in the line wins. Programs Molf
 * knows (`git rm x`, `docker rm y`) and wrappers whose commands it found are not probed.
 */
export function findDenyProbes(
  parser: ShellParser,
  command: SimpleCommand,
  options: {
    home?: string | undefined;
    /** The bounds and the clock of the line's own analysis. Default: SHELL_ANALYSIS_LIMITS. */
    limits?: Partial<ShellAnalysisLimits> | undefined;
  },
): SimpleCommand[] {
  if (command.redirect === true || command.unwrapped === true) return [];
  const [name, ...rest] = command.words;
  if (name === undefined) return [];
  const program = programName(name.value);
  if (name.isStatic && (isKnownPlainCommand(program) || Object.hasOwn(FILE_COMMANDS, program))) return [];
  const via = [...command.via, `${name.isStatic ? program : name.value} (an unknown program)`];
  const probes: SimpleCommand[] = [];
  rest.forEach((word, index) => {
    if (probes.length >= MAX_PROBES || !word.isStatic || word.value === '' || word.value.startsWith('-')) return;
    const words = rest.slice(index, index + PROBE_WORDS);
    probes.push({ words, text: renderWords(words), via });
  });
  // A name with blanks that a runner was handed is a command line given as one word (`pnpm -c exec
  // 'rm -rf y'`); typed as a command, `'rm x'` is a program of that name.
  const lineAsName = name.isStatic && /\s/.test(name.value) && command.via.length > 0;
  for (const word of lineAsName ? [name, ...rest] : rest) {
    if (probes.length >= MAX_PROBES) break;
    if (!word.isStatic || word.value.length > MAX_PAYLOAD_CHARS || !/[\s;&|()`$]/.test(word.value)) continue;
    for (const found of analyzeShellLine(parser, word.value, { home: options.home, limits: options.limits }).commands) {
      probes.push({ ...found, via: [...via, ...found.via] });
    }
  }
  return probes;
}
