import { evaluatePermission, type PermissionEvaluation, type PermissionLayers } from './evaluate-permission.ts';
import { type SubjectOptions, type ToolCallSubjects, toPermissionSubjects } from './permission-subjects.ts';
import { loadShellParser } from './shell/shell-parser.ts';

export type ToolCallEvaluation = PermissionEvaluation & { subjects: ToolCallSubjects };

export type PermissionEngine = {
  /** Decides one tool call against the given rule layers. Synchronous and free of I/O. */
  evaluate(options: {
    tool: string;
    args: Record<string, unknown>;
    layers: PermissionLayers;
    /** Expands `~` and `$HOME` in patterns and shell words; default: not expanded. */
    home?: string | undefined;
    canonicalPaths?: SubjectOptions['canonicalPaths'];
  }): ToolCallEvaluation;
};

/** Loads the shell grammar once; the engine is then synchronous. */
export async function createPermissionEngine(): Promise<PermissionEngine> {
  const parser = await loadShellParser();
  return {
    evaluate(options) {
      const subjects = toPermissionSubjects({ ...options, parser });
      const evaluation = evaluatePermission({
        tool: options.tool,
        subjects,
        layers: options.layers,
        home: options.home,
      });
      // grep reads file contents: a path read_file may not read, grep may not search either
      // (`grep . .env` must not sidestep `"*.env": "deny"`).
      if (options.tool === 'grep' && evaluation.decision.type !== 'deny' && typeof options.args.path === 'string') {
        const asRead = evaluatePermission({
          tool: 'read_file',
          subjects: toPermissionSubjects({ ...options, tool: 'read_file', args: { path: options.args.path }, parser }),
          layers: options.layers,
          home: options.home,
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
