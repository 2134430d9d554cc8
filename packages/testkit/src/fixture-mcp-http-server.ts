import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createFixtureMcpServer } from './fixture-mcp-tools.ts';

export type FixtureMcpHttpServer = AsyncDisposable & { url: string; requests: number; close(): Promise<void> };

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? undefined : JSON.parse(text));
      } catch (error) {
        reject(error);
      }
    });
    request.on('error', reject);
  });
}

/**
 * The fixture's tools over Streamable HTTP (stateless: a server per request) at `/mcp` on
 * 127.0.0.1, refusing requests without the expected header when one is given.
 */
export async function startFixtureMcpHttpServer(
  options: {
    requireHeader?: { name: string; value: string };
    /** Speak only the older HTTP+SSE transport (GET /mcp opens the stream, POST /messages sends). */
    sseOnly?: boolean;
    /** Default 0: a free port. */
    port?: number;
  } = {},
): Promise<FixtureMcpHttpServer> {
  const sockets = new Set<Socket>();
  const state = { requests: 0 };
  const sse = new Map<string, SSEServerTransport>();
  const server = createServer((request, response) => {
    void (async () => {
      state.requests += 1;
      const required = options.requireHeader;
      if (required !== undefined && request.headers[required.name.toLowerCase()] !== required.value) {
        response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
      if (options.sseOnly === true) {
        if (request.method === 'GET' && request.url === '/mcp') {
          const transport = new SSEServerTransport('/messages', response);
          sse.set(transport.sessionId, transport);
          response.on('close', () => sse.delete(transport.sessionId));
          await createFixtureMcpServer().connect(transport);
          return;
        }
        const url = new URL(request.url ?? '/', 'http://localhost');
        const transport = sse.get(url.searchParams.get('sessionId') ?? '');
        if (request.method === 'POST' && url.pathname === '/messages' && transport !== undefined) {
          await transport.handlePostMessage(request, response);
          return;
        }
        // Streamable HTTP requests get what an SSE-only server answers: not allowed.
        response.writeHead(405).end();
        return;
      }
      if (request.url !== '/mcp' || request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const body = await readJson(request);
      const mcp = createFixtureMcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get requests() {
      return state.requests;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
