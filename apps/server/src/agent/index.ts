export { type AgentDirectory, createAgentDirectory } from './agent-directory.ts';
export { type AgentProfile, BUILTIN_AGENTS, type ResolvedAgents } from './agent-profiles.ts';
export { type AgentRunner, type AgentSettings, createAgentRunner, toTurnLimits } from './agent-runner.ts';
export { toModelMessages, toModelView } from './model-view.ts';
export { createProjectInstructions, type ProjectInstructions } from './project-instructions.ts';
export { runSubagent, type SubagentOutcome, type SubagentRun } from './run-subagent.ts';
export { runTurn, type TurnEndReason, type TurnRequest } from './run-turn.ts';
export type { TurnLimits, TurnServices } from './turn-services.ts';
