import { posix } from 'node:path';
import { MCP_SERVER_TOOL, toMcpServerSubjects } from './mcp-server-subject.ts';
import { escapeGlob } from './permission-rule.ts';
import {
  analyzeShellLine,
  type FileAccess,
  type ShellAnalysis,
  type ShellAnalysisLimits,
  type SimpleCommand,
} from './shell/analyze-shell-line.ts';
import { commandArity, EXACT_ONLY_COMMANDS } from './shell/command-arity.ts';
import { findDenyProbes } from './shell/deny-probes.ts';
import { findDestructiveCommand } from './shell/destructive-commands.ts';
import { withoutGlobalOptions } from './shell/global-options.ts';
import type { ShellParser } from './shell/shell-parser.ts';
import { renderWords, toVisible } from './shell/shell-words.ts';
import { readsProgramFromStdin } from './shell/stdin-programs.ts';
import type { PermissionSubject, ToolCallSubjects } from './tool-call-subjects.ts';

export type { PermissionSubject, ToolCallSubjects } from './tool-call-subjects.ts';

/**
 * A path a call's rules need resolved on the worker: a file, a glob pattern the shell expands, or
 * (`tree`) a directory whose every file the call reads, answered with the forms of a file under it
 * that the read_file rules deny, if there is one.
 */
export type PathArgument = { path: string; pattern: boolean; tree?: 'all' | 'visible' };

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
  /** Bounds of the shell analysis; default SHELL_ANALYSIS_LIMITS. */
  limits?: Partial<ShellAnalysisLimits> | undefined;
  /** The line's analysis when the caller has it already (same command, home and limits). */
  analysis?: ShellAnalysis | undefined;
  /**
   * Canonical forms of a path argument, authoritative first (relative to the workdir when inside
   * it, else absolute). Without them only lexical forms are used.
   */
  canonicalPaths?: ((given: string) => readonly string[] | undefined) | undefined;
  /**
   * For a directory a shell line reads whole (`grep -r KEY .`): its forms and those of a file under
   * it that the read_file rules deny, if any; empty when the worker could not look through it.
   */
  treeContents?: ((given: string) => readonly string[] | undefined) | undefined;
};

function pathSubject(given: string, options: SubjectOptions): PermissionSubject {
  const canonical = options.canonicalPaths?.(given) ?? [];
  const lexical = normalizeLexically(given);
  const forms = unique([...canonical, lexical, given]);
  return {
    kind: 'path',
    label: toVisible(canonical[0] !== undefined && canonical[0] !== given ? `${given} → ${canonical[0]}` : given),
    forms,
    alwaysPattern: escapeGlob(forms[0] as string),
  };
}

/**
 * The pattern "always" saves for a shell command: its action prefix, or its exact line. A
 * destructive command (`rm`, `git push --force`…, see destructive-commands.ts) is saved only as
 * its exact line, or not at all when even that line does not say what it destroys.
 */
export function toCommandAlwaysPattern(command: SimpleCommand): string | null {
  if (command.opaque !== undefined) return null;
  // A file write is saved for exactly that file, never as a blanket `> *`.
  if (command.redirect === true) return command.words.every((word) => word.isStatic) ? escapeGlob(command.text) : null;
  const words = command.words;
  const name = (words[0]?.value ?? '').split('/').pop() ?? '';
  if (readsProgramFromStdin(words)) return null;
  const exact = escapeGlob(command.text);
  const destructive = findDestructiveCommand(command);
  if (destructive !== undefined) return destructive.unsavable === undefined ? exact : null;
  if (
    command.derived === true ||
    EXACT_ONLY_COMMANDS.has(name) ||
    command.text !== command.text.trim() ||
    command.text.includes('\n')
  )
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
  if (name === undefined || !name.isStatic || command.redirect === true) return [command.text];
  const base = name.value.slice(name.value.lastIndexOf('/') + 1);
  const byPath = base !== '' && base !== name.value;
  const named = byPath ? [{ ...name, value: base }, ...command.words.slice(1)] : command.words;
  // `git -C . push --force` is also `git push --force` (only a deny counts on these forms).
  const bare = withoutGlobalOptions(named, base);
  if (!byPath && bare === undefined) return [command.text];
  return unique([command.text, renderWords(named), ...(bare === undefined ? [] : [renderWords(bare)])]);
}

/** Where a file a shell line names lies, as the gate resolves it: relative to the call's `cwd`. */
function shellFilePath(path: string, cwd: string | undefined): string {
  return cwd === undefined || path.startsWith('/') ? path : posix.join(cwd, path);
}

function shellCwd(args: Record<string, unknown>): string | undefined {
  return typeof args.cwd === 'string' && args.cwd !== '' ? args.cwd : undefined;
}

/** The analysis of a shell_exec call's line, or undefined when it has none. */
export function analyzeShellCall(options: SubjectOptions): ShellAnalysis | undefined {
  if (typeof options.args.command !== 'string') return undefined;
  return (
    options.analysis ??
    analyzeShellLine(options.parser, options.args.command, { home: options.home, limits: options.limits })
  );
}

/**
 * A file access once for each directory the line may be in when it happens: `cd sub && cat ../.env`
 * reads `sub/../.env` if the cd worked, and `../.env` if it did not.
 */
function filePlaces(files: readonly FileAccess[]): FileAccess[] {
  return files.flatMap((file) => {
    const path = file.path.value;
    if (file.bases.length === 0 || path.startsWith('/')) return [file];
    const moved = file.bases.map((base) => ({ ...file, path: { ...file.path, value: posix.join(base, path) } }));
    return file.leftStart === true ? moved : [file, ...moved];
  });
}

/** The paths of a shell line's file reads and writes that the gate resolves on the worker. */
export function shellPathArguments(analysis: ShellAnalysis, args: Record<string, unknown>): PathArgument[] {
  const cwd = shellCwd(args);
  const seen = new Map<string, PathArgument>();
  for (const file of filePlaces(analysis.files)) {
    // Mentions are judged as written: resolving every path-like word would cost more than it finds.
    if (file.mentioned === true) continue;
    const path = shellFilePath(file.path.value, cwd);
    const tree = file.path.hasGlob ? undefined : file.recursive;
    const key = `${tree ?? 'path'}\0${path}`;
    if (!seen.has(key)) seen.set(key, { path, pattern: file.path.hasGlob, ...(tree === undefined ? {} : { tree }) });
  }
  return [...seen.values()];
}

function commandSubject(command: SimpleCommand, options: SubjectOptions, probes: boolean): PermissionSubject {
  const subject: PermissionSubject = {
    kind: 'command',
    label: command.via.length === 0 ? command.text : `${command.text} (via ${command.via.join(' → ')})`,
    forms: commandForms(command),
    // Computed only for subjects that ask, when "always" is offered.
    get alwaysPattern() {
      return toCommandAlwaysPattern(command);
    },
    get destructive() {
      return findDestructiveCommand(command);
    },
    ...(command.opaque === undefined ? {} : { problem: command.opaque }),
    ...(command.onlyDeny === true ? { onlyDeny: true as const } : {}),
  };
  // A stretch of an unreadable line is matched as it is: probing each would cost more than it finds.
  if (probes && !(command.onlyDeny === true && command.via.includes('rough scan'))) {
    subject.denyProbes = () =>
      findDenyProbes(options.parser, command, { home: options.home, limits: options.limits }).map((probe) =>
        commandSubject(probe, options, false),
      );
  }
  return subject;
}

/** A path-like argument of a command Molf does not model: a deny of reading or writing it asks. */
function mentionSubjects(file: FileAccess, options: SubjectOptions): PermissionSubject[] {
  const given = shellFilePath(file.path.value, shellCwd(options.args));
  return (['read_file', 'write_file'] as const).map((ruleTool) => ({
    kind: 'path',
    label: `${file.by} names ${toVisible(given)}`,
    forms: unique([normalizeLexically(given), given]),
    alwaysPattern: null,
    ruleTool,
    restrictOnly: true,
    mention: true,
  }));
}

/** A file a shell line reads or writes, judged by the read_file or write_file rules. */
function fileSubject(file: FileAccess, options: SubjectOptions): PermissionSubject {
  const given = shellFilePath(file.path.value, shellCwd(options.args));
  const verb = file.access === 'read' ? 'reads' : 'writes';
  const ruleTool = file.access === 'read' ? 'read_file' : 'write_file';
  if (file.path.hasGlob) {
    const expanded = options.canonicalPaths?.(given) ?? [];
    return {
      kind: 'path',
      label: `${file.by} ${verb} ${toVisible(given)}`,
      forms: unique([...expanded, given]),
      alwaysPattern: null,
      ruleTool,
      restrictOnly: true,
      ...(expanded.length === 0
        ? { problem: `${file.by} ${verb} files named by a pattern the shell expands: ${given}` }
        : {}),
    };
  }
  if (file.recursive !== undefined) {
    // Answered with the directory's forms and those of a denied file under it, or none when the
    // worker could not look through it all.
    const found = options.treeContents?.(given);
    return {
      kind: 'path',
      label: `${file.by} reads every ${file.recursive === 'visible' ? 'visible ' : ''}file under ${toVisible(given)}`,
      forms: unique([...(found ?? []), normalizeLexically(given), given]),
      alwaysPattern: null,
      ruleTool,
      restrictOnly: true,
      ...(found !== undefined && found.length === 0
        ? { problem: `${file.by} reads a directory the worker could not look through: ${given}` }
        : {}),
    };
  }
  const subject = pathSubject(given, options);
  const resolved = options.canonicalPaths?.(given);
  return {
    ...subject,
    label: `${file.by} ${verb} ${subject.label}`,
    alwaysPattern: null,
    ruleTool,
    restrictOnly: true,
    ...(resolved !== undefined && resolved.length === 0
      ? { problem: `the worker could not tell where ${toVisible(given)} leads` }
      : {}),
  };
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
    const shell = analyzeShellCall(options);
    if (shell === undefined) return { subjects: [], problems: ['the call has no command string'] };
    const subjects = [
      ...shell.commands.map((command) => commandSubject(command, options, true)),
      ...filePlaces(shell.files).flatMap((file) =>
        file.mentioned === true ? mentionSubjects(file, options) : [fileSubject(file, options)],
      ),
    ];
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
  if (tool === CRON_TOOL) return { subjects: [cronSubject(args)], problems: [] };
  // Starting a server of .mcp.json: its name, command line and a digest of its definition.
  if (tool === MCP_SERVER_TOOL) return toMcpServerSubjects(args);
  // MCP and other tools: the rule key is the (qualified) tool name itself.
  return { subjects: [{ kind: 'tool', label: tool, forms: [tool], alwaysPattern: '*' }], problems: [] };
}

/** The server's tool that schedules prompts. */
export const CRON_TOOL = 'cron';

/** How much of a scheduled prompt an approval shows (a prompt may be 200,000 characters). */
const CRON_PROMPT_SHOWN = 2_000;

/**
 * A `cron` call: ruled by its action (`"cron": { "*": "ask", "list": "allow" }`), shown with what
 * it would schedule: `add every 5m, session new: "run the tests"`.
 */
function cronSubject(args: Record<string, unknown>): PermissionSubject {
  const action = typeof args.action === 'string' ? args.action : '(no action)';
  const text = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  const schedule =
    text('at') !== undefined
      ? `at ${text('at')}`
      : text('every') !== undefined
        ? `every ${text('every')}`
        : text('cron') !== undefined
          ? `cron "${text('cron')}"${text('tz') === undefined ? '' : ` ${text('tz')}`}`
          : undefined;
  const prompt = text('prompt');
  const parts = [
    action,
    text('job_id'),
    text('name') === undefined ? undefined : `"${text('name')}"`,
    schedule,
    text('until') === undefined ? undefined : `until ${text('until')}`,
    text('session') === undefined ? undefined : `session ${text('session')}`,
    text('on_ask') === undefined ? undefined : `on ask ${text('on_ask')}`,
  ].filter((part) => part !== undefined);
  const shown =
    prompt === undefined
      ? ''
      : `: "${prompt.length > CRON_PROMPT_SHOWN ? `${prompt.slice(0, CRON_PROMPT_SHOWN)}…" (${prompt.length} characters)` : `${prompt}"`}`;
  return { kind: 'name', label: `${parts.join(' ')}${shown}`, forms: [action], alwaysPattern: escapeGlob(action) };
}
