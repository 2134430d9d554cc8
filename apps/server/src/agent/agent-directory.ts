import type { CatalogProblem, WorkerId, WorkerRegistration } from '@molf/protocol';
import type { ModelResolver } from '../providers/resolve-model.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import { type ResolvedAgents, resolveAgents } from './agent-profiles.ts';

export type AgentDirectory = {
  /** The agents a session on this worker can run (built-in and the project's); undefined while it is offline. */
  agents(workerId: WorkerId): ResolvedAgents | undefined;
  /** Every problem of a worker's skills and agents: the worker's (files) and the server's (unknown tools, models). */
  problems(workerId: WorkerId): CatalogProblem[];
};

/**
 * The agents of each worker, resolved once per registration snapshot: a new snapshot (its files
 * changed, its MCP tools came or went) replaces the registration object, and with it this result.
 */
export function createAgentDirectory(options: {
  registry: WorkerRegistry;
  catalog: ToolCatalog;
  models: ModelResolver;
}): AgentDirectory {
  const resolved = new WeakMap<WorkerRegistration, ResolvedAgents>();
  const checkModel = (model: string) => {
    try {
      options.models.resolve({ prompt: model });
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };
  const directory: AgentDirectory = {
    problems(workerId) {
      return [
        ...(options.registry.registration(workerId)?.catalog?.problems ?? []),
        ...(directory.agents(workerId)?.problems ?? []),
      ];
    },
    agents(workerId) {
      const registration = options.registry.registration(workerId);
      if (registration === undefined) return undefined;
      let agents = resolved.get(registration);
      if (agents === undefined) {
        agents = resolveAgents({
          catalog: registration.catalog,
          toolNames: options.catalog.toolNames(workerId),
          checkModel,
        });
        resolved.set(registration, agents);
      }
      return agents;
    },
  };
  return directory;
}
