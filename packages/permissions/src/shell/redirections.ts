import type { Node } from 'web-tree-sitter';
import { type AnalysisState, pushCommand } from './analysis-state.ts';
import { isDeviceTarget, isNetworkTarget, recordFile } from './command-effects.ts';
import type { InnerRun } from './inner-run.ts';
import { programName } from './program-name.ts';
import { renderWords, type ShellWord, staticWord, toShellWord } from './shell-words.ts';
import { readsProgramFromStdin } from './stdin-programs.ts';

/** Output operators that write to a file (`>&` only when its target is not a descriptor). */
const OUTPUT_OPERATORS = new Set(['>', '>>', '&>', '&>>', '>|', '<>', '>&']);
const INPUT_OPERATORS = new Set(['<', '<>', '<&']);

/**
 * `echo x >> ~/.bashrc` writes a file and `cat < .env` reads one: both are subjects of their own. A
 * write is also a command-like subject (`> out.txt`) that the shell rules judge.
 */
export function visitFileRedirect(state: AnalysisState, node: Node, via: string[]): void {
  const operator = node.children.find(
    (child) => child !== null && (OUTPUT_OPERATORS.has(child.type) || INPUT_OPERATORS.has(child.type)),
  );
  const destination = node.childForFieldName('destination');
  if (operator === undefined || operator === null || destination === null) return;
  const target = toShellWord(destination, state.context);
  // `>&2`, `<&0`, `>&-`: descriptors, no files.
  if ((operator.type === '>&' || operator.type === '<&') && target.isStatic && /^(\d+|-)$/.test(target.value)) return;
  const by = `${operator.type} ${renderWords([target])}`;
  if (INPUT_OPERATORS.has(operator.type)) recordFile(state, { access: 'read', path: target, via, by });
  if (!OUTPUT_OPERATORS.has(operator.type)) return;
  recordFile(state, { access: 'write', path: target, via, by });
  // A device or a network connection changes no file: nothing for the shell rules to judge.
  if (target.isStatic && (isDeviceTarget(target.value) || isNetworkTarget(target.value))) return;
  const command = pushCommand(state, { words: [staticWord(operator.type), target], via });
  delete command.opaque;
  command.redirect = true;
  command.text = by;
}

const SHELL_PROGRAMS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash']);

/**
 * `bash 0<<< 'cmd'`: the parser reads the descriptor of a here-string as an argument (a number
 * right before the redirection, with no blank between), bash as the descriptor.
 */
export function isDescriptorWord(node: Node): boolean {
  const next = node.nextSibling;
  return (
    node.type === 'number' && next !== null && next.type.endsWith('_redirect') && next.startIndex === node.endIndex
  );
}

/**
 * A shell given its program by a heredoc or a here-string (`bash <<'EOF' … EOF`, `sh <<< 'cmd'`):
 * that program is to be analyzed like `bash -c`. `command` is the command node, `redirects` the
 * nodes that may feed it (a here-string can stand inside the command node). Returns one run per
 * program fed (a line, or the problem of one only known when the line runs); none when no shell
 * here reads its program from its input.
 */
export function findFedPrograms(state: AnalysisState, command: Node, redirects: readonly (Node | null)[]): InnerRun[] {
  const all = command.children
    .filter(
      (child) =>
        child !== null &&
        child.type !== 'variable_assignment' &&
        !child.type.endsWith('_redirect') &&
        !isDescriptorWord(child),
    )
    .map((child) =>
      toShellWord(
        child?.type === 'command_name' ? ((child.firstChild ?? child) as Node) : (child as Node),
        state.context,
      ),
    );
  // The shell may stand behind wrappers (`sudo bash <<< '…'`, `env bash <<'EOF'`).
  const at = all.findIndex((word) => word.isStatic && SHELL_PROGRAMS.has(programName(word.value)));
  if (at === -1 || !readsProgramFromStdin(all.slice(at))) return [];
  const name = programName((all[at] as ShellWord).value);
  const fed: InnerRun[] = [];
  for (const redirect of redirects) {
    if (redirect === null) continue;
    let program: ShellWord | undefined;
    if (redirect.type === 'heredoc_redirect') {
      const bodyNode = redirect.children.find((child) => child?.type === 'heredoc_body');
      program = { value: bodyNode?.text ?? '', isStatic: true, hasGlob: false };
    } else if (redirect.type === 'herestring_redirect') {
      // `0<<< 'cmd'`: the descriptor comes first.
      const word = redirect.namedChildren.findLast((child) => child !== null && child.type !== 'file_descriptor');
      program = word === undefined || word === null ? undefined : toShellWord(word, state.context);
    }
    if (program === undefined) continue;
    fed.push(
      program.isStatic
        ? { type: 'line', source: program.value, via: `${name} <<` }
        : { type: 'problem', problem: `${name} runs a program only known when the line runs` },
    );
  }
  return fed;
}

/** A redirected statement whose command is a shell fed its program: the command node's id and what it runs. */
export function findFedStatement(
  state: AnalysisState,
  node: Node,
): { commandId: number; runs: InnerRun[] } | undefined {
  const body = node.childForFieldName('body');
  if (body?.type !== 'command') return undefined;
  const runs = findFedPrograms(state, body, node.children);
  return runs.length === 0 ? undefined : { commandId: body.id, runs };
}
