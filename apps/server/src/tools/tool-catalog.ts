import type { Logger } from '@molf/logging';
import { agentMayUse } from '@molf/permissions';
import { type ToolDescriptor, toToolDescriptor, type WorkerId } from '@molf/protocol';
import type { AgentProfile } from '../agent/agent-profiles.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { ServerTool } from './server-tool.ts';

/** Tools workers offer for diagnostics only (`molf tool`), never to the model. */
const DIAGNOSTIC_TOOLS = new Set(['echo']);

export type ToolCatalog = {
  /**
   * The tools a model working on this worker is offered: the worker's (built-in and MCP) and the
   * server's, narrowed to what a subagent may use. Undefined while the worker is offline.
   */
  modelTools(workerId: WorkerId, options?: { agent?: AgentProfile | undefined }): ToolDescriptor[] | undefined;
  /** The name of every tool a session on this worker may be offered (none while it is offline). */
  toolNames(workerId: WorkerId): string[];
  /** The server-side tool of this name, if there is one. */
  serverTool(name: string): ServerTool | undefined;
};

/**
 * Merges each worker's tools with the server's own. Server tools take precedence over a worker
 * tool of the same name (a worker can't shadow skill or task); that worker tool is left out and
 * logged once.
 */
export function createToolCatalog(options: {
  registry: WorkerRegistry;
  /** Default none. */
  serverTools?: readonly ServerTool[];
  logger: Logger;
}): ToolCatalog {
  const serverTools = new Map<string, ServerTool>();
  for (const tool of options.serverTools ?? []) {
    if (serverTools.has(tool.definition.name)) {
      throw new Error(`two server tools are named "${tool.definition.name}"`);
    }
    serverTools.set(tool.definition.name, tool);
  }
  const fixedDescriptors = new Map(
    [...serverTools.values()].map((tool) => [tool.definition.name, toToolDescriptor(tool.definition)]),
  );
  const reported = new Set<string>();

  function workerTools(workerId: WorkerId): ToolDescriptor[] | undefined {
    const registration = options.registry.registration(workerId);
    if (registration === undefined) return undefined;
    return registration.tools.filter((tool) => {
      if (DIAGNOSTIC_TOOLS.has(tool.name)) return false;
      if (!serverTools.has(tool.name)) return true;
      const key = `${workerId}\u0000${tool.name}`;
      if (!reported.has(key)) {
        reported.add(key);
        options.logger.warn(
          { workerId, tool: tool.name },
          `the worker's tool "${tool.name}" has the name of a server tool and is not offered; rename it`,
        );
      }
      return false;
    });
  }

  return {
    modelTools(workerId, offer = {}) {
      const registration = options.registry.registration(workerId);
      const fromWorker = workerTools(workerId);
      if (registration === undefined || fromWorker === undefined) return undefined;
      const fromServer: ToolDescriptor[] = [];
      for (const tool of serverTools.values()) {
        const descriptor =
          tool.offer === undefined
            ? fixedDescriptors.get(tool.definition.name)
            : tool.offer({ workerId, registration, agent: offer.agent });
        if (descriptor !== undefined) fromServer.push(descriptor);
      }
      const all = [...fromWorker, ...fromServer];
      const { agent } = offer;
      return agent === undefined ? all : all.filter((tool) => agentMayUse(agent, tool.name));
    },
    toolNames(workerId) {
      return [...(workerTools(workerId) ?? []).map((tool) => tool.name), ...serverTools.keys()];
    },
    serverTool: (name) => serverTools.get(name),
  };
}
