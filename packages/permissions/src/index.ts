export { addAllowRules, type RuleGrant } from './add-allow-rules.ts';
export { agentMayUse, TASK_TOOL } from './agent-tools.ts';
export {
  evaluatePermission,
  type PermissionDecision,
  type PermissionEvaluation,
  type PermissionLayers,
  type SubjectVerdict,
} from './evaluate-permission.ts';
export { locateJsoncValue } from './locate-jsonc-value.ts';
export {
  MCP_SERVER_TOOL,
  type McpServerDefinition,
  toMcpServerSubject,
  toMcpServerSubjects,
} from './mcp-server-subject.ts';
export { safeParseJsonc, textPosition } from './parse-jsonc.ts';
export {
  MAX_PATTERN_CHARS,
  type PermissionsFileProblem,
  type PermissionsFileResult,
  safeParseAgentRules,
  safeParsePermissionsFile,
  safeParseRulePattern,
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
  GRANT_ID_PATTERN,
  isInForce,
  isPermissionAction,
  PERMISSION_ACTIONS,
  type PermissionAction,
  type PermissionRule,
  type RuleSource,
} from './permission-rule.ts';
export {
  CRON_TOOL,
  type PathArgument,
  type PermissionSubject,
  permissionPathArguments,
  type ToolCallSubjects,
  toCommandAlwaysPattern,
  toPermissionSubjects,
} from './permission-subjects.ts';
export { createReadDenial, type ReadRule, toReadRules } from './read-rules.ts';
export { type RemoveGrantResult, removeGrantRule } from './remove-grant-rule.ts';
export { safeParseRuleExpiry } from './rule-expiry.ts';
export {
  analyzeShellLine,
  type FileAccess,
  SHELL_ANALYSIS_LIMITS,
  type ShellAnalysis,
  type ShellAnalysisLimits,
  type SimpleCommand,
} from './shell/analyze-shell-line.ts';
export { FILE_COMMANDS } from './shell/file-arguments.ts';
export { loadShellParser, type ShellParser } from './shell/shell-parser.ts';
export { HARMLESS_VARIABLES } from './shell/variable-assignments.ts';
