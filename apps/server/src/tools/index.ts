export { createToolCallRunner, type GatedToolCall, type ToolCallRunner } from './run-tool-call.ts';
export type { ServerTool, ServerToolContext } from './server-tool.ts';
export { createToolCatalog, type ToolCatalog } from './tool-catalog.ts';
