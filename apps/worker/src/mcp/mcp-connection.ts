import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@molf/logging';
import { type Attachment, type ToolResult, toErrorResult } from '@molf/protocol';
import type { McpServerConfig } from './mcp-config.ts';

export const MCP_TIMEOUTS = {
  connectMs: 30_000,
  listToolsMs: 10_000,
  callMs: 60_000,
} as const;

/** The only variables of the worker's environment an MCP child gets (besides its declared `env`). */
export const MCP_ENV_ALLOWLIST = ['PATH', 'HOME', 'USER', 'LANG', 'TERM', 'TMPDIR'] as const;

export type McpTool = { name: string; description: string; inputSchema: Record<string, unknown> };

export type McpConnection = {
  readonly server: string;
  tools(): Promise<McpTool[]>;
  call(options: {
    tool: string;
    args: Record<string, unknown>;
    signal: AbortSignal;
    timeoutMs?: number;
  }): Promise<ToolResult>;
  close(): Promise<void>;
};

/** The child's environment: the allow-listed variables of ours, then what the config declares. */
export function toChildEnv(parent: NodeJS.ProcessEnv, declared: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of MCP_ENV_ALLOWLIST) {
    const value = parent[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...declared };
}

type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; text?: string; blob?: string; mimeType?: string } }
  | { type: 'resource_link'; uri: string; name?: string }
  | { type: string };

/**
 * An MCP result as a Molf result: text parts joined, every image (and audio) an attachment,
 * `structuredContent` kept as JSON text when there is no text, `isError` an error result with the
 * server's own text.
 */
export function toToolResult(
  server: string,
  result: { content?: unknown; isError?: unknown; structuredContent?: unknown },
): ToolResult {
  const texts: string[] = [];
  const attachments: Attachment[] = [];
  for (const part of (Array.isArray(result.content) ? result.content : []) as McpContent[]) {
    if (part.type === 'text' && 'text' in part) texts.push(part.text);
    else if ((part.type === 'image' || part.type === 'audio') && 'data' in part) {
      attachments.push({ mimeType: part.mimeType, size: Buffer.byteLength(part.data, 'base64'), data: part.data });
    } else if (part.type === 'resource' && 'resource' in part) {
      if (part.resource.text !== undefined) texts.push(part.resource.text);
      else texts.push(`[resource ${part.resource.uri}]`);
    } else if (part.type === 'resource_link' && 'uri' in part) {
      texts.push(`[resource ${part.uri}]`);
    }
  }
  if (texts.length === 0 && result.structuredContent !== undefined)
    texts.push(JSON.stringify(result.structuredContent));
  const output = texts.join('\n');
  const meta = result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent };
  if (result.isError === true) {
    return {
      output: '',
      error: `[${server}] ${output === '' ? 'the tool failed' : output}`,
      meta: { ...meta, errorKind: 'internal' },
    };
  }
  return {
    output,
    ...(Object.keys(meta).length === 0 ? {} : { meta }),
    ...(attachments.length === 0 ? {} : { attachments }),
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Connects to one MCP server with the official SDK client: stdio (a child with a scrubbed
 * environment, its stderr logged) or Streamable HTTP with the SSE transport as fallback.
 * `onToolsChanged` fires on `tools/list_changed`, `onClose` when the connection ends.
 */
export async function connectMcpServer(options: {
  config: McpServerConfig;
  workdir: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  onToolsChanged: () => void;
  onClose: () => void;
  connectTimeoutMs?: number;
}): Promise<McpConnection> {
  const { config, logger } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? MCP_TIMEOUTS.connectMs;

  const open = async (transport: Transport): Promise<Client> => {
    const client = new Client({ name: 'molf-worker', version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolsChanged());
    await withTimeout(
      client.connect(transport, { timeout: connectTimeoutMs }),
      connectTimeoutMs,
      `connecting to ${config.name}`,
    );
    return client;
  };

  let client: Client;
  if (config.type === 'stdio') {
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: toChildEnv(options.env, config.env),
      cwd: options.workdir,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') logger.info(`MCP [${config.name}] stderr: ${line}`);
      }
    });
    client = await open(transport);
  } else {
    const url = new URL(config.url);
    try {
      client = await open(new StreamableHTTPClientTransport(url, { requestInit: { headers: config.headers } }));
    } catch (error) {
      // Servers that only speak the older HTTP+SSE transport refuse the POST with 400, 404 or 405
      // (the fallback the MCP specification describes); any other failure (401, a network error)
      // is the real answer and is reported as it is.
      const status = error instanceof StreamableHTTPError ? error.code : undefined;
      if (status !== 400 && status !== 404 && status !== 405) {
        throw status === undefined ? error : new Error(`HTTP ${status}: ${(error as Error).message}`, { cause: error });
      }
      logger.info({ server: config.name, status }, 'Streamable HTTP refused; trying the SSE transport');
      try {
        client = await open(new SSEClientTransport(url, { requestInit: { headers: config.headers } }));
      } catch (sseError) {
        throw new Error(`${(error as Error).message}; the SSE transport failed too: ${(sseError as Error).message}`, {
          cause: sseError,
        });
      }
    }
  }
  let closed = false;
  client.onclose = () => {
    if (closed) return;
    closed = true;
    options.onClose();
  };

  return {
    server: config.name,
    async tools() {
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: MCP_TIMEOUTS.listToolsMs,
        });
        for (const tool of page.tools) {
          tools.push({
            name: tool.name,
            description: tool.description ?? '',
            inputSchema: tool.inputSchema as Record<string, unknown>,
          });
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    },
    async call({ tool, args, signal, timeoutMs }) {
      try {
        // The SDK sends notifications/cancelled when the signal aborts.
        const result = await client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: timeoutMs ?? MCP_TIMEOUTS.callMs,
        });
        // Old servers answer with `toolResult` instead of `content`.
        const shaped =
          'content' in result ? result : { content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] };
        return toToolResult(
          config.name,
          shaped as { content?: unknown; isError?: unknown; structuredContent?: unknown },
        );
      } catch (error) {
        if (signal.aborted) return toErrorResult('cancelled', `[${config.name}] the call was cancelled`);
        return toErrorResult('internal', `[${config.name}] ${(error as Error).message}`);
      }
    },
    async close() {
      closed = true;
      await client.close().catch(() => undefined);
    },
  };
}
