/** The tool that runs a subagent: no subagent has it (children never start children of their own). */
export const TASK_TOOL = 'task';

/**
 * Whether a subagent may use a tool at all, before any rule: the tools its allow-list names
 * (`undefined`: every tool), and never `task`.
 */
export function agentMayUse(agent: { tools: readonly string[] | undefined }, tool: string): boolean {
  if (tool === TASK_TOOL) return false;
  return agent.tools === undefined || agent.tools.includes(tool);
}
