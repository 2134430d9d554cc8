import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { toMcpServerSubject } from '@molf/permissions';
import { type ToolResult, toErrorResult } from '@molf/protocol';
import { z } from 'zod';
import type { SandboxRunner } from '../sandbox/index.ts';
import { defineToolHandler, type ToolHandler } from '../tools/tool-handler.ts';
import { type McpInvalidServer, type McpServerConfig, parseMcpConfigEntries } from './mcp-config.ts';
// Types only: the connection module, and with it the MCP SDK (ajv, zod-to-json-schema: 130 modules),
// is imported when a server is started, so a worker whose project has no .mcp.json never loads it.
import type { McpConnection, McpTool } from './mcp-connection.ts';
import { awaitStartDecision, type McpStartApprover } from './mcp-start-approval.ts';
import { MCP_TIMEOUTS } from './mcp-timeouts.ts';
import { assignToolNames } from './mcp-tool-names.ts';

/** tools/list_changed notifications are gathered this long before the tools are listed again. */
const LIST_CHANGED_SETTLE_MS = 50;

/** Tools one worker may offer in all (the registration's limit). */
const MAX_MCP_TOOLS = 1_000;

/** Edits of `.mcp.json` are applied once the file has been quiet this long. */
const RELOAD_SETTLE_MS = 300;

/** Reconnect delays after a server drops: 1 s, ×1.5, at most 30 s. */
export const MCP_RECONNECT = { initialMs: 1_000, factor: 1.5, maxMs: 30_000 } as const;

export type McpServerState = {
  name: string;
  type: McpServerConfig['type'];
  /**
   * `awaiting approval`: new or changed, not started until approved; `denied`: not started until it
   * changes; `disabled`: `"enabled": false` in `.mcp.json`; `invalid`: cannot start as written (a
   * variable it needs is not set), until the file changes.
   */
  status: 'connecting' | 'connected' | 'offline' | 'awaiting approval' | 'denied' | 'disabled' | 'invalid';
  /** Why it is offline (the last error), denied or invalid. */
  reason?: string;
  /** Its tools by their own names, as the server lists them. */
  tools: string[];
  /** Its tools as the model is offered them (`{server}_{tool}`, sanitised); fewer when over the cap. */
  offered: string[];
};

export type { McpStartApprover, McpStartDecision, McpStartRequest } from './mcp-start-approval.ts';

export type McpManager = {
  /**
   * Resolves once every server of the file has connected, failed its first attempt, or waits for
   * approval (a person may take a long time; a server approved later starts in the background).
   */
  ready: Promise<void>;
  /** The MCP tools as worker tool handlers (qualified names), current. */
  handlers(): ToolHandler[];
  /** The handler of one server's tool, by its own name. */
  handlerFor(server: string, tool: string): ToolHandler | undefined;
  servers(): McpServerState[];
  close(): Promise<void>;
};

type ServerEntry = {
  config: McpServerConfig;
  /** As written in `.mcp.json`; with `config`, what identifies this version of the server. */
  definition: Record<string, unknown>;
  subject: string;
  /** Set while the start waits for approval; aborted when the answer is no longer wanted. */
  approval: AbortController | undefined;
  connection: McpConnection | undefined;
  /** Bumped at each (re)connect: callbacks of an older connection are ignored. */
  generation: number;
  status: McpServerState['status'];
  reason: string | undefined;
  tools: McpTool[];
  retryMs: number;
  retryTimer: NodeJS.Timeout | undefined;
  refreshTimer?: NodeJS.Timeout | undefined;
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
  /**
   * Fires with `servers()` whenever it would answer differently (a status, a reason, a tool), also
   * while the manager starts. Default none.
   */
  onServersChanged?: (servers: McpServerState[]) => void;
  connectTimeoutMs?: number;
  /**
   * Asked before a server that is new or changed since this manager last started it is started
   * (not after a crash: a reconnect runs what was approved). Default: every server starts without
   * asking, as for `molf mcp list` and `molf mcp call`, which the person runs themselves.
   */
  approveStart?: McpStartApprover | undefined;
  /** Run stdio servers inside the worker's OS sandbox. Default: outside. */
  sandbox?: SandboxRunner | undefined;
}): Promise<McpManager> {
  const { logger } = options;
  const entries = new Map<string, ServerEntry>();
  /** Servers of the file with `"enabled": false`. */
  let disabled: Array<{ name: string; type: McpServerConfig['type'] }> = [];
  /** Servers of the file that cannot start as written. */
  let invalid: McpInvalidServer[] = [];
  let handlers: ToolHandler[] = [];
  let named: Array<{ server: string; tool: string; handler: ToolHandler }> = [];
  let closing = false;
  /** Aborted by close(): every connect in progress gives up and stops what it started. */
  const stopAll = new AbortController();
  /** Subjects approved in this process: a definition changed and changed back is not asked about twice. */
  const approvedSubjects = new Set<string>();
  /** Starts waiting for approval, so that close() can wait for the ones just approved. */
  const admissions = new Set<Promise<void>>();

  function rebuild(): void {
    // Servers keep their tools (and names) while they reconnect: calls answer "offline", and a name
    // never moves to another server's tool because one server is down.
    const connected = [...entries.values()].filter((entry) => entry.tools.length > 0 || entry.status === 'connected');
    const assigned = assignToolNames({
      reserved: options.reserved,
      servers: connected.map((entry) => ({ server: entry.config.name, tools: entry.tools.map((tool) => tool.name) })),
    });
    for (const warning of assigned.warnings) logger.warn(warning);
    // A registration holds at most 1,000 tools: more would make the server refuse the worker.
    const room = MAX_MCP_TOOLS - options.reserved.length;
    if (assigned.tools.length > room) {
      logger.warn(
        { offered: assigned.tools.length, kept: room },
        `MCP: more than ${room} tools; the rest are left out`,
      );
    }
    const tools = assigned.tools.slice(0, Math.max(0, room));
    const before = new Set(handlers.map((handler) => handler.definition.name));
    named = tools.map(({ server, tool, name }) => ({ server, tool, handler: toHandler(server, tool, name) }));
    handlers = named.map((entry) => entry.handler);
    const after = new Set(handlers.map((handler) => handler.definition.name));
    const added = [...after].filter((name) => !before.has(name));
    const removed = [...before].filter((name) => !after.has(name));
    if (added.length > 0 || removed.length > 0) {
      logger.info({ added, removed }, 'MCP tools changed');
      options.onToolsChanged();
    }
    reportServers();
  }

  function servers(): McpServerState[] {
    const listed: McpServerState[] = [
      ...[...entries.values()].map((entry) => ({
        name: entry.config.name,
        type: entry.config.type,
        status: entry.status,
        ...(entry.reason === undefined ? {} : { reason: entry.reason }),
        tools: entry.tools.map((tool) => tool.name),
        offered: named.filter((tool) => tool.server === entry.config.name).map((tool) => tool.handler.definition.name),
      })),
      ...disabled.map(({ name, type }) => ({ name, type, status: 'disabled' as const, tools: [], offered: [] })),
      ...invalid.map(({ name, type, reason }) => ({
        name,
        type,
        status: 'invalid' as const,
        reason,
        tools: [],
        offered: [],
      })),
    ];
    return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** What `servers()` answered when `onServersChanged` last fired. */
  let reported = '[]';
  /** Tells `onServersChanged` when the servers' states differ from the last report. */
  function reportServers(): void {
    if (options.onServersChanged === undefined || closing) return;
    const current = servers();
    const text = JSON.stringify(current);
    if (text === reported) return;
    reported = text;
    options.onServersChanged(current);
  }

  function toHandler(server: string, tool: string, name: string): ToolHandler {
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
  }

  /** Refreshes per server: only the latest one's answer counts (an older list must not win). */
  const refreshes = new Map<ServerEntry, number>();

  async function refreshTools(entry: ServerEntry, generation: number): Promise<void> {
    const refresh = (refreshes.get(entry) ?? 0) + 1;
    refreshes.set(entry, refresh);
    try {
      const tools = (await entry.connection?.tools()) ?? [];
      if (entry.generation !== generation || refreshes.get(entry) !== refresh) return;
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
    reportServers();
    try {
      const { connectMcpServer } = await import('./mcp-connection.ts');
      const connection = await connectMcpServer({
        config: entry.config,
        workdir: options.workdir,
        env: options.env,
        logger,
        ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
        sandbox: options.sandbox,
        signal: stopAll.signal,
        onToolsChanged: () => {
          // A burst of list_changed notifications becomes one listing (and one update of the server).
          if (entry.generation !== generation) return;
          clearTimeout(entry.refreshTimer);
          entry.refreshTimer = setTimeout(() => void refreshTools(entry, generation), LIST_CHANGED_SETTLE_MS);
          entry.refreshTimer.unref();
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

  /** Starts a server at once when no approval is needed, else once the approver allows it (in the background). */
  function admit(entry: ServerEntry): Promise<void> {
    const { approveStart } = options;
    if (approveStart === undefined || approvedSubjects.has(entry.subject)) return connect(entry);
    const controller = new AbortController();
    entry.approval = controller;
    entry.status = 'awaiting approval';
    reportServers();
    const { name } = entry.config;
    const admission = (async () => {
      const decision = await awaitStartDecision(approveStart, {
        name,
        definition: entry.definition,
        subject: entry.subject,
        signal: controller.signal,
      });
      if (decision === undefined || closing || entries.get(name) !== entry) return;
      entry.approval = undefined;
      if (decision.type === 'deny') {
        entry.status = 'denied';
        entry.reason = decision.reason;
        reportServers();
        logger.warn({ server: name, reason: decision.reason }, 'MCP server denied; not started until it changes');
        return;
      }
      approvedSubjects.add(entry.subject);
      logger.info({ server: name }, 'MCP server approved; starting');
      await connect(entry);
    })().catch((error: unknown) =>
      logger.error({ err: error, server: name }, 'MCP: starting an approved server failed'),
    );
    admissions.add(admission);
    void admission.then(() => admissions.delete(admission));
    return Promise.resolve();
  }

  async function stop(entry: ServerEntry): Promise<void> {
    entry.approval?.abort();
    clearTimeout(entry.refreshTimer);
    if (entry.retryTimer !== undefined) clearTimeout(entry.retryTimer);
    entry.retryTimer = undefined;
    entry.generation += 1;
    const connection = entry.connection;
    entry.connection = undefined;
    await connection?.close();
  }

  /**
   * Makes the running servers match the file: new ones started, removed ones stopped, changed ones
   * restarted. A file that does not parse leaves everything as it is.
   */
  async function apply(reason: 'start' | 'reload'): Promise<void> {
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') logger.warn({ err: error, path }, 'cannot read .mcp.json');
      return error.code === 'ENOENT' ? '' : undefined;
    });
    if (text === undefined) return;
    if (text === '' && reason === 'reload' && entries.size > 0) {
      logger.warn({ path }, '.mcp.json was removed; stopping every MCP server');
    }
    const parsed =
      text === ''
        ? { ok: true as const, entries: [], disabled: [], invalid: [] }
        : parseMcpConfigEntries(text, { env: options.env, workdir: options.workdir, file: path });
    if (!parsed.ok) {
      logger.error(
        `MCP: ${parsed.error}; ${reason === 'start' ? 'no MCP servers are started' : 'the running MCP servers are kept'}`,
      );
      return;
    }
    for (const server of parsed.invalid) logger.error(server.reason);
    disabled = parsed.disabled;
    invalid = parsed.invalid;
    const wanted = new Map(parsed.entries.map((wantedEntry) => [wantedEntry.config.name, wantedEntry]));
    const stopping: Promise<void>[] = [];
    for (const [name, entry] of entries) {
      const next = wanted.get(name);
      if (
        next !== undefined &&
        JSON.stringify(next.config) === JSON.stringify(entry.config) &&
        JSON.stringify(next.definition) === JSON.stringify(entry.definition)
      ) {
        continue;
      }
      entries.delete(name);
      stopping.push(stop(entry));
      if (reason === 'reload')
        logger.info({ server: name }, next === undefined ? 'MCP server removed' : 'MCP server changed; restarting');
    }
    await Promise.all(stopping);
    const started: ServerEntry[] = [];
    for (const { config, definition } of wanted.values()) {
      if (entries.has(config.name)) continue;
      const entry: ServerEntry = {
        config,
        definition,
        subject: toMcpServerSubject({ name: config.name, definition }),
        approval: undefined,
        connection: undefined,
        generation: 0,
        status: 'connecting',
        reason: undefined,
        tools: [],
        retryMs: MCP_RECONNECT.initialMs,
        retryTimer: undefined,
      };
      entries.set(config.name, entry);
      started.push(entry);
    }
    rebuild();
    await Promise.all(started.map((entry) => admit(entry)));
  }

  // Hot reload: the directory is watched (the file may be replaced or created), changes settle 300 ms.
  let reloadTimer: NodeJS.Timeout | undefined;
  let reloading = Promise.resolve();
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(options.workdir, { persistent: false }, (_event, file) => {
      if (file !== '.mcp.json' || closing) return;
      clearTimeout(reloadTimer);
      reloadTimer = setTimeout(() => {
        reloading = reloading
          .then(() => apply('reload'))
          .catch((error: unknown) => {
            logger.error({ err: error }, 'MCP: reloading .mcp.json failed');
          });
      }, RELOAD_SETTLE_MS);
    });
    watcher.on('error', (error) =>
      logger.warn({ err: error }, 'MCP: watching .mcp.json failed; changes need a restart'),
    );
  } catch (error) {
    logger.warn({ err: error }, 'MCP: cannot watch .mcp.json; changes need a restart');
  }
  // Watching starts first, so that an edit made while the servers start is not missed.
  const ready = apply('start').catch((error: unknown) =>
    logger.error({ err: error }, 'MCP: starting the servers failed'),
  );

  return {
    ready,
    handlers: () => handlers,
    handlerFor: (server, tool) => named.find((entry) => entry.server === server && entry.tool === tool)?.handler,
    servers,
    async close() {
      closing = true;
      stopAll.abort();
      clearTimeout(reloadTimer);
      watcher?.close();
      await ready;
      await reloading;
      for (const entry of entries.values()) entry.approval?.abort();
      await Promise.all(admissions);
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          if (entry.retryTimer !== undefined) clearTimeout(entry.retryTimer);
          clearTimeout(entry.refreshTimer);
          entry.generation += 1;
          await entry.connection?.close();
        }),
      );
    },
  };
}
