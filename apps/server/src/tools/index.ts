export { createCronTool } from './cron-tool.ts';
export { createToolCallRunner, type GatedToolCall, type ToolCallRunner } from './run-tool-call.ts';
export type { ServerTool, ServerToolContext, ToolOfferContext } from './server-tool.ts';
export { createSkillTool, loadSkill, SKILL_TOOL } from './skill-tool.ts';
export { createTaskTool } from './task-tool.ts';
export { createToolCatalog, type ToolCatalog } from './tool-catalog.ts';
