export { createWorker, type MolfWorker, type WorkerConfig } from './create-worker.ts';
export { loadWorkerConfigFile, type WorkerConfigFile, WorkerConfigFileSchema } from './load-worker-config-file.ts';
export { type McpConfigEntry, parseMcpConfigEntries } from './mcp/mcp-config.ts';
export { type McpManager, type McpServerState, startMcpManager } from './mcp/mcp-manager.ts';
export { qualifyToolName } from './mcp/mcp-tool-names.ts';
export {
  createSandboxRunner,
  defaultHiddenPaths,
  describeSandbox,
  type PreparedSandbox,
  prepareSandbox,
  type SandboxConfig,
  type SandboxMode,
  SandboxModeSchema,
  type SandboxRunner,
} from './sandbox/index.ts';
export { builtinTools } from './tools/builtin-tools.ts';
export { echoTool } from './tools/echo.ts';
export { editFileTool } from './tools/edit-file.ts';
export { globTool } from './tools/glob-files.ts';
export { createGrepTool, grepTool } from './tools/grep-files.ts';
export { createProcessReaper, type ProcessReaper } from './tools/process-reaper.ts';
export { readFileTool } from './tools/read-file.ts';
export { createReadTracker, type ReadTracker } from './tools/read-tracker.ts';
export { createPathPolicy, type PathPolicy, resolvePathsForGate, resolveToolPath } from './tools/resolve-tool-path.ts';
export { runToolCall } from './tools/run-tool-call.ts';
export { shellExecTool } from './tools/shell-exec.ts';
export { defineToolHandler, type ToolContext, type ToolHandler } from './tools/tool-handler.ts';
export { writeFileTool } from './tools/write-file.ts';
export { validateWorkdir } from './validate-workdir.ts';
export { WORKER_VERSION } from './version.ts';
