import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { type ToolResult, toErrorResult } from '@molf/protocol';
import { z } from 'zod';
import { defineToolHandler, type ToolHandler } from '../tools/tool-handler.ts';
import { type McpServerConfig, parseMcpConfig } from './mcp-config.ts';
import { connectMcpServer, MCP_TIMEOUTS, type McpConnection, type McpTool } from './mcp-connection.ts';
import { assignToolNames } from './mcp-tool-names.ts';

/** Reconnect delays after a server drops: 1 s, ×1.5, at most 30 s. */
export const MCP_RECONNECT = { initialMs: 1_000, factor: 1.5, maxMs: 30_000 } as const;

export type McpServerState = {
  name: string;
  type: McpServerConfig['type'];
  status: 'connecting' | 'connected' | 'offline';
  /** Why it is offline (the last error). */
  reason?: string;
  tools: string[];
};

export type McpManager = {
  /** The MCP tools as worker tool handlers (qualified names), current. */
  handlers(): ToolHandler[];
  servers(): McpServerState[];
  close(): Promise<void>;
};

type ServerEntry = {
  config: McpServerConfig;
  connection: McpConnection | undefined;
  /** Bumped at each (re)connect: callbacks of an older connection are ignored. */
  generation: number;
  status: McpServerState['status'];
  reason: string | undefined;
  tools: McpTool[];
  retryMs: number;
  retryTimer: NodeJS.Timeout | undefined;
};

function toArgsSchema(inputSchema: Record<string, unknown>): z.ZodType {
  try {
    return z.fromJSONSchema(inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read: the server validates the arguments itself.
    return z.record(z.string(), z.unknown());
  }
}

/**
 * The worker's MCP servers from `{workdir}/.mcp.json`: all enabled servers connected in parallel
 * (a failed one is logged and retried, never fatal), their tools named so that none shadows a
 * built-in or another server's, re-listed on `tools/list_changed`, reconnected with backoff after a
 * crash. `onToolsChanged` fires whenever the set of MCP tools changes.
 */
export async function startMcpManager(options: {
  workdir: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Names of the built-in tools, which MCP tools may never take. */
  reserved: readonly string[];
  onToolsChanged: () => void;
  connectTimeoutMs?: number;
}): Promise<McpManager> {
  const { logger } = options;
  const entries = new Map<string, ServerEntry>();
  let handlers: ToolHandler[] = [];
  let closing = false;

  function rebuild(): void {
    const connected = [...entries.values()].filter((entry) => entry.status === 'connected');
    const { tools, warnings } = assignToolNames({
      reserved: options.reserved,
      servers: connected.map((entry) => ({ server: entry.config.name, tools: entry.tools.map((tool) => tool.name) })),
    });
    for (const warning of warnings) logger.warn(warning);
    const before = new Set(handlers.map((handler) => handler.definition.name));
    handlers = tools.map(({ server, tool, name }) => {
      const entry = entries.get(server) as ServerEntry;
      const described = entry.tools.find((candidate) => candidate.name === tool) as McpTool;
      return defineToolHandler({
        definition: {
          name,
          description: `[${server}] ${described.description}`.slice(0, 8_192),
          args: toArgsSchema(described.inputSchema),
          inputSchema: described.inputSchema,
          defaultTimeoutMs: MCP_TIMEOUTS.callMs,
        },
        run: (args, context): Promise<ToolResult> => {
          const current = entries.get(server);
          if (current?.connection === undefined || current.status !== 'connected') {
            return Promise.resolve(toErrorResult('worker_offline', `[${server}] is offline — reconnecting`));
          }
          return current.connection.call({ tool, args: args as Record<string, unknown>, signal: context.signal });
        },
      });
    });
    const after = new Set(handlers.map((handler) => handler.definition.name));
    const added = [...after].filter((name) => !before.has(name));
    const removed = [...before].filter((name) => !after.has(name));
    if (added.length > 0 || removed.length > 0) {
      logger.info({ added, removed }, 'MCP tools changed');
      options.onToolsChanged();
    }
  }

  async function refreshTools(entry: ServerEntry, generation: number): Promise<void> {
    try {
      const tools = (await entry.connection?.tools()) ?? [];
      if (entry.generation !== generation) return;
      entry.tools = tools;
      rebuild();
    } catch (error) {
      logger.warn({ server: entry.config.name, err: error }, 'MCP: listing tools failed');
    }
  }

  function scheduleReconnect(entry: ServerEntry, reason: string): void {
    if (closing || entry.retryTimer !== undefined) return;
    entry.status = 'offline';
    entry.reason = reason;
    rebuild();
    const delay = entry.retryMs;
    entry.retryMs = Math.min(MCP_RECONNECT.maxMs, Math.round(entry.retryMs * MCP_RECONNECT.factor));
    logger.warn({ server: entry.config.name, reason, retryInMs: delay }, 'MCP server offline; reconnecting');
    entry.retryTimer = setTimeout(() => {
      entry.retryTimer = undefined;
      void connect(entry);
    }, delay);
    entry.retryTimer.unref();
  }

  async function connect(entry: ServerEntry): Promise<void> {
    entry.generation += 1;
    const generation = entry.generation;
    entry.status = 'connecting';
    try {
      const connection = await connectMcpServer({
        config: entry.config,
        workdir: options.workdir,
        env: options.env,
        logger,
        ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
        onToolsChanged: () => {
          if (entry.generation === generation) void refreshTools(entry, generation);
        },
        onClose: () => {
          // A stale connection's close must not tear down its replacement.
          if (entry.generation !== generation || closing) return;
          entry.connection = undefined;
          scheduleReconnect(entry, 'the server closed the connection');
        },
      });
      if (closing || entry.generation !== generation) {
        await connection.close();
        return;
      }
      entry.connection = connection;
      entry.tools = await connection.tools();
      entry.status = 'connected';
      entry.reason = undefined;
      entry.retryMs = MCP_RECONNECT.initialMs;
      logger.info({ server: entry.config.name, tools: entry.tools.length }, 'MCP server connected');
      rebuild();
    } catch (error) {
      if (entry.generation !== generation) return;
      await entry.connection?.close();
      entry.connection = undefined;
      scheduleReconnect(entry, (error as Error).message);
    }
  }

  const path = join(options.workdir, '.mcp.json');
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    logger.warn({ err: error, path }, 'cannot read .mcp.json; no MCP servers');
    return undefined;
  });
  if (text !== undefined) {
    const parsed = parseMcpConfig(text, { env: options.env, workdir: options.workdir, file: path });
    if (!parsed.ok) {
      logger.warn(`MCP: ${parsed.error}; no MCP servers are started`);
    } else {
      for (const warning of parsed.warnings) logger.warn(`MCP: ${warning}`);
      for (const config of parsed.servers) {
        entries.set(config.name, {
          config,
          connection: undefined,
          generation: 0,
          status: 'connecting',
          reason: undefined,
          tools: [],
          retryMs: MCP_RECONNECT.initialMs,
          retryTimer: undefined,
        });
      }
      await Promise.all([...entries.values()].map((entry) => connect(entry)));
    }
  }

  return {
    handlers: () => handlers,
    servers: () =>
      [...entries.values()].map((entry) => ({
        name: entry.config.name,
        type: entry.config.type,
        status: entry.status,
        ...(entry.reason === undefined ? {} : { reason: entry.reason }),
        tools: entry.tools.map((tool) => tool.name),
      })),
    async close() {
      closing = true;
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          if (entry.retryTimer !== undefined) clearTimeout(entry.retryTimer);
          entry.generation += 1;
          await entry.connection?.close();
        }),
      );
    },
  };
}
