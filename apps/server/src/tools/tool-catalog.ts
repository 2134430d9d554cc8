import type { Logger } from '@molf/logging';
import { type ToolDescriptor, toToolDescriptor, type WorkerId } from '@molf/protocol';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { ServerTool } from './server-tool.ts';

/** Tools workers offer for diagnostics only (`molf tool`), never to the model. */
const DIAGNOSTIC_TOOLS = new Set(['echo']);

export type ToolCatalog = {
  /**
   * The tools a model working on this worker is offered: the worker's (built-in and MCP) and the
   * server's. Undefined while the worker is offline.
   */
  modelTools(workerId: WorkerId): ToolDescriptor[] | undefined;
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
  const serverDescriptors = [...serverTools.values()].map((tool) => toToolDescriptor(tool.definition));
  const reported = new Set<string>();

  return {
    modelTools(workerId) {
      const registration = options.registry.registration(workerId);
      if (registration === undefined) return undefined;
      const fromWorker = registration.tools.filter((tool) => {
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
      return [...fromWorker, ...serverDescriptors];
    },
    serverTool: (name) => serverTools.get(name),
  };
}
