import { posix } from 'node:path';
import { escapeGlob } from './permission-rule.ts';
import { analyzeShellLine, type ShellAnalysis, type SimpleCommand } from './shell/analyze-shell-line.ts';
import { commandArity, EXACT_ONLY_COMMANDS } from './shell/command-arity.ts';
import type { ShellParser } from './shell/shell-parser.ts';
import { renderWords } from './shell/shell-words.ts';
import { readsProgramFromStdin } from './shell/unwrap-command.ts';

/** One thing a tool call's rules are matched against: a path, a simple command, a name. */
export type PermissionSubject = {
  kind: 'path' | 'pattern' | 'command' | 'name' | 'tool';
  /** What people see. */
  label: string;
  /**
   * The strings patterns are matched against. The first is authoritative; a deny on any of the
   * others also denies (a rule on `*.env` must catch `./sub/../.env` and a link to `.env`).
   */
  forms: string[];
  /** The pattern an "always" answer saves for this subject, or null when none is safe. */
  alwaysPattern: string | null;
  /** Set when the subject cannot be judged by rules: it is at most `ask`. */
  problem?: string;
};

/** Built-in tools whose argument `path` names one file. */
const FILE_TOOLS = new Set(['read_file', 'write_file', 'edit_file']);

/**
 * The path arguments of a call that the caller may resolve to canonical forms (symlinks
 * followed, relative to the workdir) before evaluating it.
 */
export function permissionPathArguments(tool: string, args: Record<string, unknown>): string[] {
  const path =
    typeof args.path === 'string' ? args.path : typeof args.file_path === 'string' ? args.file_path : undefined;
  if (FILE_TOOLS.has(tool)) return path === undefined ? [] : [path];
  if (tool === 'glob' || tool === 'grep') return [path ?? '.'];
  return [];
}

/** `./a/../b` → `b`; absolute paths stay absolute. */
function normalizeLexically(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.startsWith('./') ? normalized.slice(2) : normalized;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

export type SubjectOptions = {
  tool: string;
  args: Record<string, unknown>;
  parser: ShellParser;
  home?: string | undefined;
  /**
   * Canonical forms of a path argument, authoritative first (relative to the workdir when inside
   * it, else absolute). Without them only lexical forms are used.
   */
  canonicalPaths?: ((given: string) => readonly string[] | undefined) | undefined;
};

export type ToolCallSubjects = {
  subjects: PermissionSubject[];
  /** Reasons the call cannot be fully judged (shell lines only); they make it at most `ask`. */
  problems: string[];
  /** The shell analysis, for `explain`. */
  shell?: ShellAnalysis;
};

function pathSubject(given: string, options: SubjectOptions): PermissionSubject {
  const canonical = options.canonicalPaths?.(given) ?? [];
  const lexical = normalizeLexically(given);
  const forms = unique([...canonical, lexical, given]);
  return {
    kind: 'path',
    label: canonical[0] !== undefined && canonical[0] !== given ? `${given} → ${canonical[0]}` : given,
    forms,
    alwaysPattern: escapeGlob(forms[0] as string),
  };
}

/** The pattern "always" saves for a shell command: its action prefix, or its exact line. */
export function toCommandAlwaysPattern(command: SimpleCommand): string | null {
  if (command.opaque !== undefined) return null;
  // A file write is saved for exactly that file, never as a blanket `> *`.
  if (command.redirect === true) return command.words.every((word) => word.isStatic) ? escapeGlob(command.text) : null;
  const words = command.words;
  const name = (words[0]?.value ?? '').split('/').pop() ?? '';
  if (readsProgramFromStdin(words)) return null;
  const exact = escapeGlob(command.text);
  if (EXACT_ONLY_COMMANDS.has(name) || command.text !== command.text.trim() || command.text.includes('\n'))
    return exact;
  if (
    name === 'find' &&
    words.some((word) => /^-(delete|exec|execdir|ok|okdir|fprint0?|fprintf|fls)$/.test(word.value))
  ) {
    return exact;
  }
  // `/usr/bin/git push x` has the arity of `git push x`, not of an unknown command (`/usr/bin/git *`).
  const values = words.map((word, index) => (index === 0 ? name : word.value));
  const arity = commandArity(values);
  const prefix = words.slice(0, arity);
  // An option or a run-time value inside the prefix would make the blanket pattern mean more
  // than the action the user saw (`git -c x=y *`): keep the exact line instead.
  if (prefix.some((word) => !word.isStatic || word.hasGlob || word.value.startsWith('-'))) return exact;
  if (words.length <= arity && command.text === prefix.map((word) => word.value).join(' ')) return exact;
  return `${escapeGlob(prefix.map((word) => word.value).join(' '))} *`;
}

/**
 * A command named by its path is also matched by its file name, so that a deny on `rm *` catches
 * `/bin/rm -rf x` and `./rm x` (only a deny counts on that second form).
 */
function commandForms(command: SimpleCommand): string[] {
  const name = command.words[0];
  if (name === undefined || !name.isStatic || !name.value.includes('/')) return [command.text];
  const base = name.value.slice(name.value.lastIndexOf('/') + 1);
  const rendered = renderWords([name]);
  if (base === '' || !command.text.startsWith(rendered)) return [command.text];
  return [command.text, `${renderWords([{ ...name, value: base }])}${command.text.slice(rendered.length)}`];
}

/** What a tool call's rules are matched against, per tool. */
export function toPermissionSubjects(options: SubjectOptions): ToolCallSubjects {
  const { tool, args } = options;
  if (FILE_TOOLS.has(tool)) {
    const [path] = permissionPathArguments(tool, args);
    if (path === undefined)
      return { subjects: [{ kind: 'tool', label: tool, forms: [tool], alwaysPattern: '*' }], problems: [] };
    return { subjects: [pathSubject(path, options)], problems: [] };
  }
  if (tool === 'glob') {
    const subjects: PermissionSubject[] = [];
    if (typeof args.pattern === 'string') {
      subjects.push({
        kind: 'pattern',
        label: args.pattern,
        forms: unique([args.pattern, normalizeLexically(args.pattern)]),
        alwaysPattern: escapeGlob(args.pattern),
      });
    }
    const [path] = permissionPathArguments(tool, args);
    if (typeof args.path === 'string' && path !== undefined) subjects.push(pathSubject(path, options));
    return { subjects, problems: [] };
  }
  if (tool === 'grep') {
    const [path] = permissionPathArguments(tool, args);
    return { subjects: path === undefined ? [] : [pathSubject(path, options)], problems: [] };
  }
  if (tool === 'shell_exec') {
    if (typeof args.command !== 'string') {
      return { subjects: [], problems: ['the call has no command string'] };
    }
    const shell = analyzeShellLine(options.parser, args.command, { home: options.home });
    const subjects = shell.commands.map(
      (command): PermissionSubject => ({
        kind: 'command',
        label: command.via.length === 0 ? command.text : `${command.text} (via ${command.via.join(' → ')})`,
        forms: commandForms(command),
        // Computed only for subjects that ask, when "always" is offered.
        get alwaysPattern() {
          return toCommandAlwaysPattern(command);
        },
        ...(command.opaque === undefined ? {} : { problem: command.opaque }),
      }),
    );
    return { subjects, problems: shell.problems, shell };
  }
  if (tool === 'skill' || tool === 'task') {
    const name = tool === 'skill' ? args.name : (args.subagent_type ?? args.agent);
    if (typeof name === 'string') {
      return {
        subjects: [{ kind: 'name', label: name, forms: [name], alwaysPattern: escapeGlob(name) }],
        problems: [],
      };
    }
  }
  // MCP and other tools: the rule key is the (qualified) tool name itself.
  return { subjects: [{ kind: 'tool', label: tool, forms: [tool], alwaysPattern: '*' }], problems: [] };
}
