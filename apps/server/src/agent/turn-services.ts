import type { Logger } from '@molf/logging';
import type { ModelResolver } from '../providers/resolve-model.ts';
import type { SessionEvents } from '../sessions/session-events.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import type { ToolCallRunner } from '../tools/run-tool-call.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { ProjectInstructions } from './project-instructions.ts';

/** What a turn works with: shared by every turn of every session, holding no turn's state. */
export type TurnServices = {
  store: SessionStore;
  events: SessionEvents;
  models: ModelResolver;
  registry: WorkerRegistry;
  catalog: ToolCatalog;
  toolCalls: ToolCallRunner;
  instructions: ProjectInstructions;
  logger: Logger;
};

/** A turn's limits, defaults applied (see `AgentSettings`). */
export type TurnLimits = {
  maxSteps: number;
  turnTimeoutMs: number;
  contextTokens: number;
  streamIdleTimeoutMs: number;
};
