export { addAllowRules } from './add-allow-rules.ts';
export {
  evaluatePermission,
  type PermissionDecision,
  type PermissionEvaluation,
  type PermissionLayers,
  type SubjectVerdict,
} from './evaluate-permission.ts';
export { safeParseJsonc, textPosition } from './parse-jsonc.ts';
export {
  MAX_PATTERN_CHARS,
  type PermissionsFileProblem,
  type PermissionsFileResult,
  safeParsePermissionsFile,
} from './parse-permissions-file.ts';
export {
  createPermissionEngine,
  type PermissionEngine,
  type PermissionEngineOptions,
  type ToolCallEvaluation,
} from './permission-engine.ts';
export {
  describeRule,
  escapeGlob,
  isPermissionAction,
  PERMISSION_ACTIONS,
  type PermissionAction,
  type PermissionRule,
  type RuleSource,
} from './permission-rule.ts';
export {
  type PermissionSubject,
  permissionPathArguments,
  type ToolCallSubjects,
  toCommandAlwaysPattern,
  toPermissionSubjects,
} from './permission-subjects.ts';
  type PathArgument,
export { createReadDenial, type ReadRule, toReadRules } from './read-rules.ts';
export {
  analyzeShellLine,
  SHELL_ANALYSIS_LIMITS,
  type ShellAnalysis,
  type SimpleCommand,
} from './shell/analyze-shell-line.ts';
export { loadShellParser, type ShellParser } from './shell/shell-parser.ts';
  type FileAccess,
  type ShellAnalysisLimits,
export { FILE_COMMANDS } from './shell/file-arguments.ts';
export { HARMLESS_VARIABLES } from './shell/variable-assignments.ts';
