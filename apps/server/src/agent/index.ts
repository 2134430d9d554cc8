export { type AgentRunner, type AgentSettings, createAgentRunner, toTurnLimits } from './agent-runner.ts';
export { toModelMessages, toModelView } from './model-view.ts';
export { createProjectInstructions, type ProjectInstructions } from './project-instructions.ts';
export { runTurn, type TurnEndReason, type TurnRequest } from './run-turn.ts';
export type { TurnLimits, TurnServices } from './turn-services.ts';
