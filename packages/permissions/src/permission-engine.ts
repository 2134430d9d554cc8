import { evaluatePermission, type PermissionEvaluation, type PermissionLayers } from './evaluate-permission.ts';
import {
  analyzeShellCall,
  type PathArgument,
  permissionPathArguments,
  type SubjectOptions,
  shellPathArguments,
  type ToolCallSubjects,
  toPermissionSubjects,
} from './permission-subjects.ts';
import type { ShellAnalysis, ShellAnalysisLimits } from './shell/analyze-shell-line.ts';
import { loadShellParser, type ShellParser } from './shell/shell-parser.ts';

export type ToolCallEvaluation = PermissionEvaluation & { subjects: ToolCallSubjects };

export type PermissionEngine = {
  /**
   * Loads what judging `tool` takes, once per process: the bash grammar for `shell_exec` when the
   * engine was made with `lazyParser`. Call it before `pathArguments` and `evaluate` of that tool.
   */
  prepare(tool: string): Promise<void>;
  /**
   * The paths a call's rules need resolved where the call runs (symlinks followed, glob patterns
   * expanded) before `evaluate`: a file tool's path, the files a shell line reads and writes.
   */
  pathArguments(options: { tool: string; args: Record<string, unknown>; home?: string | undefined }): PathArgument[];
  /** Decides one tool call against the given rule layers. Synchronous and free of I/O. */
  evaluate(options: {
    tool: string;
    args: Record<string, unknown>;
    layers: PermissionLayers;
    /**
     * The time the rules are judged at, in ms since the epoch: a rule whose `expires` is not later
     * does not apply. The caller reads its clock, so that the engine stays pure and tests move time.
     */
    now: number;
    /** Expands `~` and `$HOME` in patterns and shell words; default: not expanded. */
    home?: string | undefined;
    /**
     * Where each path of `pathArguments` leads, authoritative first; for a pattern, every file it
     * names. Without it only the paths as written are used (and patterns ask).
     */
    canonicalPaths?: SubjectOptions['canonicalPaths'];
    /** What the worker found under each `tree` path of `pathArguments` (see SubjectOptions). */
    treeContents?: SubjectOptions['treeContents'];
  }): ToolCallEvaluation;
};

export type PermissionEngineOptions = {
  /** Bounds of the shell analysis. Default: SHELL_ANALYSIS_LIMITS. */
  limits?: Partial<ShellAnalysisLimits>;
  /** The bash parser. Default: tree-sitter-bash, loaded once per process. */
  parser?: ShellParser;
  /**
   * Load the default parser at the first `prepare('shell_exec')` instead of now. Default false.
   * The server sets it: the grammar takes about 75 MiB once V8 has compiled its WebAssembly, which
   * an idle server, or one whose agents run no shell line, does not need.
   */
  lazyParser?: boolean;
};

/** Loads the shell grammar once (now, or with `lazyParser` when first prepared); the engine is then synchronous. */
export async function createPermissionEngine(options: PermissionEngineOptions = {}): Promise<PermissionEngine> {
  let loaded = options.parser ?? (options.lazyParser === true ? undefined : await loadShellParser());
  const loadedParser = (): ShellParser => {
    if (loaded === undefined) throw new Error('the bash grammar is not loaded: prepare("shell_exec") comes first');
    return loaded;
  };
  // Only shell lines use the parser; other tools' subjects are built without touching it.
  const parser: ShellParser = {
    parse: (source, parseOptions) => loadedParser().parse(source, parseOptions),
    get statements() {
      return loadedParser().statements;
    },
  };
  // The gate asks for a call's paths, then evaluates it: the line is analyzed once for both.
  let last: { key: string; analysis: ShellAnalysis } | undefined;
  const analyze = (args: Record<string, unknown>, home: string | undefined): ShellAnalysis | undefined => {
    if (typeof args.command !== 'string') return undefined;
    const key = `${home ?? ''}\0${args.command}`;
    if (last?.key !== key) {
      const analysis = analyzeShellCall({ tool: 'shell_exec', args, parser, home, limits: options.limits });
      if (analysis === undefined) return undefined;
      last = { key, analysis };
    }
    return last.analysis;
  };
  return {
    async prepare(tool) {
      if (tool === 'shell_exec') loaded ??= await loadShellParser();
    },
    pathArguments({ tool, args, home }) {
      if (tool === 'shell_exec') {
        const analysis = analyze(args, home);
        return analysis === undefined ? [] : shellPathArguments(analysis, args);
      }
      return permissionPathArguments(tool, args).map((path) => ({ path, pattern: false }));
    },
    evaluate(call) {
      const analysis = call.tool === 'shell_exec' ? analyze(call.args, call.home) : undefined;
      const subjects = toPermissionSubjects({ ...call, parser, limits: options.limits, analysis });
      const evaluation = evaluatePermission({
        tool: call.tool,
        subjects,
        layers: call.layers,
        home: call.home,
        now: call.now,
      });
      // grep reads file contents: a path read_file may not read, grep may not search either
      // (`grep . .env` must not sidestep `"*.env": "deny"`).
      if (call.tool === 'grep' && evaluation.decision.type !== 'deny' && typeof call.args.path === 'string') {
        const asRead = evaluatePermission({
          tool: 'read_file',
          subjects: toPermissionSubjects({ ...call, tool: 'read_file', args: { path: call.args.path }, parser }),
          layers: call.layers,
          home: call.home,
          now: call.now,
        });
        if (asRead.decision.type === 'deny') {
          return {
            ...evaluation,
            decision: asRead.decision,
            decidedBy: asRead.decidedBy,
            verdicts: [...evaluation.verdicts, ...asRead.verdicts],
            alwaysPatterns: null,
            subjects,
          };
        }
      }
      return { ...evaluation, subjects };
    },
  };
}
