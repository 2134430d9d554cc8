import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@molf/logging';
import { type Attachment, type ToolResult, toErrorResult } from '@molf/protocol';
import type { SandboxRunner } from '../sandbox/index.ts';
import type { McpServerConfig } from './mcp-config.ts';
import { MCP_TIMEOUTS } from './mcp-timeouts.ts';

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

/** Bounds on what one MCP result may bring in. */
const MAX_ERROR_CHARS = 50_000;
const MAX_STRUCTURED_CHARS = 100_000;
const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

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
      const size = Buffer.byteLength(part.data, 'base64');
      if (typeof part.mimeType !== 'string' || part.mimeType === '' || !BASE64.test(part.data)) {
        texts.push(`[${part.type} left out: not valid base64 data with a MIME type]`);
      } else if (size > MAX_ATTACHMENT_BYTES) {
        texts.push(`[${part.type} left out: ${size} bytes is more than ${MAX_ATTACHMENT_BYTES}]`);
      } else {
        attachments.push({ mimeType: part.mimeType, size, data: part.data });
      }
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
  // Structured content is kept when it is of a sensible size; the text carries it otherwise.
  const structured = result.structuredContent === undefined ? undefined : JSON.stringify(result.structuredContent);
  const meta =
    structured === undefined || structured.length > MAX_STRUCTURED_CHARS
      ? {}
      : { structuredContent: result.structuredContent };
  if (result.isError === true) {
    const text = output === '' ? 'the tool failed' : output;
    const bounded =
      text.length > MAX_ERROR_CHARS
        ? `${text.slice(0, MAX_ERROR_CHARS)}… [cut at ${MAX_ERROR_CHARS} characters]`
        : text;
    return { output: '', error: `[${server}] ${bounded}`, meta: { ...meta, errorKind: 'internal' } };
  }
  return {
    output,
    ...(Object.keys(meta).length === 0 ? {} : { meta }),
    ...(attachments.length === 0 ? {} : { attachments }),
  };
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
        timer.unref();
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
  /** Aborting gives up connecting and stops what was started (a stdio child included). */
  signal?: AbortSignal;
  /** Run a stdio server inside the worker's OS sandbox. Default: outside. */
  sandbox?: SandboxRunner | undefined;
}): Promise<McpConnection> {
  const { config, logger } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? MCP_TIMEOUTS.connectMs;

  const open = async (transport: Transport): Promise<Client> => {
    const client = new Client({ name: 'molf-worker', version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolsChanged());
    const abort = () => void client.close().catch(() => undefined);
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      if (options.signal?.aborted === true) throw new Error(`connecting to ${config.name} was given up`);
      await withTimeout(
        client.connect(transport, { timeout: connectTimeoutMs }),
        connectTimeoutMs,
        `connecting to ${config.name}`,
      );
      // Checked again: the abort may have come while connecting.
      if (isAborted(options.signal)) throw new Error(`connecting to ${config.name} was given up`);
      return client;
    } catch (error) {
      // Whatever was started (a child process) is stopped before the failure is reported.
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      throw error;
    } finally {
      options.signal?.removeEventListener('abort', abort);
    }
  };

  let client: Client;
  if (config.type === 'stdio') {
    // In the sandbox the SDK starts bwrap, which starts the server under the worker's policy.
    const command =
      options.sandbox === undefined
        ? { file: config.command, args: config.args }
        : await options.sandbox.wrap({ file: config.command, args: config.args, cwd: options.workdir });
    const transport = new StdioClientTransport({
      command: command.file,
      args: command.args,
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
        // An HTTP server that went away (or forgot our session) never closes the transport: treat
        // it as a dropped connection, so that it is reconnected.
        const gone =
          (error instanceof TypeError && /fetch failed/i.test(error.message)) ||
          (error instanceof StreamableHTTPError && error.code === 404);
        if (gone && !closed) {
          closed = true;
          void client.close().catch(() => undefined);
          options.onClose();
          return toErrorResult('worker_offline', `[${config.name}] is offline — reconnecting`);
        }
        return toErrorResult('internal', `[${config.name}] ${(error as Error).message}`);
      }
    },
    async close() {
      closed = true;
      await client.close().catch(() => undefined);
    },
  };
}
