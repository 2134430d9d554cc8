import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One scripted model response, consumed by one `POST /v1/chat/completions`. */
export type FakeTurn = {
  /** Text of the answer; an array gives the chunks as they are streamed. */
  text?: string | string[];
  /** Tool calls the model makes (arguments as an object or as the raw JSON text). */
  toolCalls?: Array<{ id?: string; name: string; arguments: unknown }>;
  /** Answer with this HTTP error instead (a provider 4xx/5xx). */
  error?: { status: number; message?: string };
  /** Pause between streamed chunks. Default 0. */
  chunkDelayMs?: number;
  /**
   * Send this many chunks, then nothing more while keeping the connection open (a stalled stream).
   * A request without streaming gets no answer at all.
   */
  stallAfterChunks?: number;
  /** Send this many chunks, then cut the connection (a broken stream). */
  breakAfterChunks?: number;
  /**
   * Appends to each text chunk the wall-clock time it is sent, `⟨epoch ms⟩`
   * (`performance.timeOrigin + performance.now()`), so a client can measure chunk-to-client latency.
   * Default false.
   */
  stampChunks?: boolean;
  /**
   * Token usage reported at the end. Default: 10 prompt, 5 completion. `cachedTokens` (of the prompt
   * tokens, read from a cache) and `cost` (the call's price in US dollars, as OpenRouter reports it)
   * are sent only when given.
   */
  usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number; cost?: number };
  /**
   * Answer only a request whose messages contain this text (requests made in parallel, such as
   * subagents', arrive in any order). The first turn in the script that matches answers; a turn
   * without `match` answers any request. Default: any request.
   */
  match?: string;
};

/** A request the fake received, parsed. */
export type FakeRequest = {
  model: string;
  stream: boolean;
  messages: Array<Record<string, unknown>>;
  tools: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
};

export type FakeLlm = AsyncDisposable & {
  /** The OpenAI-compatible base URL, ending in `/v1`. */
  baseURL: string;
  /** Every request received, in order. */
  requests: FakeRequest[];
  /** Adds turns to the script (answered in order). */
  push(...turns: FakeTurn[]): void;
  /** Turns not answered yet. */
  remaining(): number;
  close(): Promise<void>;
};

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function toChunks(turn: FakeTurn): Array<Record<string, unknown>> {
  const deltas: Array<Record<string, unknown>> = [{ role: 'assistant', content: '' }];
  const texts = turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text];
  for (const text of texts) deltas.push({ content: text });
  (turn.toolCalls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
    const half = Math.floor(args.length / 2);
    deltas.push({
      tool_calls: [
        {
          index,
          id: call.id ?? `call_${randomUUID().slice(0, 8)}`,
          type: 'function',
          function: { name: call.name, arguments: args.slice(0, half) },
        },
      ],
    });
    deltas.push({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  return deltas;
}

/** A turn's usage as an OpenAI-compatible endpoint sends it (OpenRouter's `cost` included). */
function toWireUsage(usage: NonNullable<FakeTurn['usage']>): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
    ...(usage.cost === undefined ? {} : { cost: usage.cost }),
  };
}

/**
 * A scripted OpenAI-compatible chat completions server on 127.0.0.1 (port 0), for driving the
 * real provider code in tests: streamed text and tool calls, HTTP errors, slow, stalled and broken
 * streams, usage numbers. With no turn left it answers 500 ("script exhausted").
 */
export async function startFakeLlm(
  options: {
    turns?: FakeTurn[];
    /** Where to listen. Default `127.0.0.1`; a test across network namespaces gives its own address. */
    host?: string;
  } = {},
): Promise<FakeLlm> {
  const script: FakeTurn[] = [...(options.turns ?? [])];
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
      return;
    }
    const body = JSON.parse(await readBody(request)) as Record<string, unknown>;
    requests.push({
      model: String(body.model),
      stream: body.stream === true,
      messages: (body.messages as FakeRequest['messages']) ?? [],
      tools: (body.tools as FakeRequest['tools']) ?? [],
      headers: request.headers,
      body,
    });
    const text = JSON.stringify(body.messages ?? []);
    const index = script.findIndex((candidate) => candidate.match === undefined || text.includes(candidate.match));
    const turn = index === -1 ? undefined : script.splice(index, 1)[0];
    if (turn === undefined || turn.error !== undefined) {
      const status = turn?.error?.status ?? 500;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: { message: turn?.error?.message ?? 'fake LLM: script exhausted', type: 'fake_error' },
        }),
      );
      return;
    }
    const id = `chatcmpl-${randomUUID().slice(0, 8)}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = turn.usage ?? { promptTokens: 10, completionTokens: 5 };
    const finishReason = (turn.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop';
    const deltas = toChunks(turn);

    if (body.stream !== true) {
      if (turn.stallAfterChunks !== undefined) return; // keep the socket open, never answer
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: deltas.map((delta) => delta.content ?? '').join(''),
      };
      if ((turn.toolCalls?.length ?? 0) > 0) {
        message.tool_calls = (turn.toolCalls ?? []).map((call) => ({
          id: call.id ?? `call_${randomUUID().slice(0, 8)}`,
          type: 'function',
          function: {
            name: call.name,
            arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
          },
        }));
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finishReason }],
          usage: toWireUsage(usage),
        }),
      );
      return;
    }

    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const send = (payload: unknown) => response.write(`data: ${JSON.stringify(payload)}\n\n`);
    let sent = 0;
    for (const delta of deltas) {
      if (turn.stallAfterChunks !== undefined && sent >= turn.stallAfterChunks) return; // keep the socket open
      if (turn.breakAfterChunks !== undefined && sent >= turn.breakAfterChunks) {
        // Let the chunks already written reach the client first: the break is mid-stream.
        await sleep(50);
        request.socket.destroy();
        return;
      }
      if (turn.chunkDelayMs !== undefined && turn.chunkDelayMs > 0) await sleep(turn.chunkDelayMs);
      if (response.destroyed) return;
      const stamped =
        turn.stampChunks === true && typeof delta.content === 'string'
          ? { ...delta, content: `${delta.content}⟨${(performance.timeOrigin + performance.now()).toFixed(3)}⟩` }
          : delta;
      send({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        choices: [{ index: 0, delta: stamped, finish_reason: null }],
      });
      sent += 1;
    }
    send({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [{ index: 0, delta: {}, finish_reason: finishReason }],
    });
    send({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [],
      usage: toWireUsage(usage),
    });
    response.end('data: [DONE]\n\n');
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `fake LLM failed: ${(error as Error).message}` } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
    return closing;
  };
  return {
    baseURL: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    requests,
    push: (...turns) => script.push(...turns),
    remaining: () => script.length,
    close,
    [Symbol.asyncDispose]: close,
  };
}
