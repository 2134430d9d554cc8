import { createSilentLogger } from '@molf/logging';
import type { ToolDescriptor, WorkerId, WorkerRegistration } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { ServerTool } from './server-tool.ts';
import { createToolCatalog } from './tool-catalog.ts';

const WORKER = '00000000-0000-4000-8000-000000000001' as WorkerId;

function registryWith(tools: string[] | undefined): WorkerRegistry {
  const registration =
    tools === undefined
      ? undefined
      : ({
          tools: tools.map((name): ToolDescriptor => ({ name, description: `worker ${name}`, inputSchema: {} })),
        } as WorkerRegistration);
  return { registration: (workerId: WorkerId) => (workerId === WORKER ? registration : undefined) } as WorkerRegistry;
}

function serverTool(name: string): ServerTool {
  return {
    definition: { name, description: `server ${name}`, args: z.object({}), defaultTimeoutMs: 1_000 },
    run: async () => ({ output: '' }),
  };
}

describe('the tool catalog', () => {
  it("offers the model the worker's tools and the server's, without diagnostic tools", () => {
    const catalog = createToolCatalog({
      registry: registryWith(['read_file', 'echo', 'github_search']),
      serverTools: [serverTool('skill')],
      logger: createSilentLogger(),
    });
    expect(catalog.modelTools(WORKER)?.map((tool) => tool.name)).toEqual(['read_file', 'github_search', 'skill']);
    expect(catalog.modelTools(WORKER)?.at(-1)).toMatchObject({
      description: 'server skill',
      inputSchema: { type: 'object' },
    });
  });

  it('offers nothing for a worker that is offline', () => {
    const catalog = createToolCatalog({ registry: registryWith(undefined), logger: createSilentLogger() });
    expect(catalog.modelTools(WORKER)).toBeUndefined();
  });

  it('lets no worker tool shadow a server tool of the same name', () => {
    const catalog = createToolCatalog({
      registry: registryWith(['skill', 'read_file']),
      serverTools: [serverTool('skill')],
      logger: createSilentLogger(),
    });
    const offered = catalog.modelTools(WORKER) ?? [];
    expect(offered.filter((tool) => tool.name === 'skill')).toEqual([
      expect.objectContaining({ description: 'server skill' }),
    ]);
    expect(catalog.serverTool('skill')?.definition.description).toBe('server skill');
    expect(catalog.serverTool('read_file')).toBeUndefined();
  });

  it('refuses two server tools of one name', () => {
    expect(() =>
      createToolCatalog({
        registry: registryWith([]),
        serverTools: [serverTool('task'), serverTool('task')],
        logger: createSilentLogger(),
      }),
    ).toThrow('two server tools are named "task"');
  });
});
