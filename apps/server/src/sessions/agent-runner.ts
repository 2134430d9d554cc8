import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  INSTRUCTIONS_JOB,
  type Instructions,
  InstructionsSchema,
  isMolfError,
  MolfError,
  type SessionMessage,
  type ToolCallId,
  type ToolDescriptor,
  type ToolResult,
  type WorkerId,
} from '@molf/protocol';
import { jsonSchema, type ModelMessage, streamText, type ToolSet, tool } from 'ai';
import type { ToolCallRunner } from '../approvals/run-gated-tool-call.ts';
import type { ModelResolver } from '../providers/resolve-model.ts';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import { pruneHistory } from './prune-history.ts';
import type { SessionEvents } from './session-events.ts';
import type { SessionStore } from './session-store.ts';
import { SUMMARIZING, summarizeHistory } from './summarize-history.ts';

export type AgentSettings = {
  /** Model steps per turn (each may call tools). Default 10. */
  maxSteps?: number;
  /** Prompts waiting while a turn runs. Default 20. */
  maxQueue?: number;
  /** A turn is aborted after this. Default 30 min. */
  turnTimeoutMs?: number;
  /** The models' context window in tokens, for pruning old tool results. Default 128,000. */
  contextTokens?: number;
  /**
   * A model stream that sends nothing for this long fails (a stalled provider). Default 120 s; the
   * first chunk may take up to five times as long (a local model loading).
   */
  streamIdleTimeoutMs?: number;
};

export type AgentRunner = {
  /** Starts a turn, or queues the prompt while one runs. */
  prompt(options: {
    sessionId: string;
    text: string;
    model?: string | undefined;
  }): Promise<{ messageId: string; queued: boolean }>;
  /** Aborts the running turn (stream, tool calls, approvals) and drops queued prompts; false when idle. */
  abort(sessionId: string): boolean;
  busy(sessionId: string): boolean;
  /** Aborts every turn and waits for them to end. */
  close(): Promise<void>;
};

type Queued = {
  messageId: string;
  text: string;
  model: string | undefined;
  at: string;
  /** Where the prompt is kept until its turn stores it as a message. */
  stored: 'history' | 'queue';
};
/** The running turns of a session: each prompt gets its own controller, so an abort ends only the turn running. */
type Turn = { controller: AbortController; queue: Queued[]; done: Promise<void>; ready: Promise<void> };

const DEFAULT_MAX_STEPS = 10;
const DEFAULT_MAX_QUEUE = 20;
const DEFAULT_TURN_TIMEOUT_MS = 30 * 60_000;
const DEFAULT_CONTEXT_TOKENS = 128_000;
const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 120_000;
/** Tools workers offer for diagnostics only. */
const HIDDEN_TOOLS = new Set(['echo']);

function now(): string {
  return new Date().toISOString();
}

/** How many identical tool calls in a row count as a loop. */
const LOOP_LENGTH = 3;

type LoopWatch = { observe(toolName: string, input: unknown): 'ok' | 'warn' | 'stop' };

/** Watches one turn's tool calls for the same call (name and arguments) repeated. */
function createLoopWatch(): LoopWatch {
  let last = '';
  let run = 0;
  let warned = false;
  return {
    observe(toolName, input) {
      const signature = `${toolName}\u0000${JSON.stringify(input)}`;
      run = signature === last ? run + 1 : 1;
      last = signature;
      if (run < LOOP_LENGTH) return 'ok';
      if (!warned) {
        warned = true;
        return 'warn';
      }
      return 'stop';
    },
  };
}

function toModelMessage(message: SessionMessage): ModelMessage {
  if (message.role === 'user') return { role: 'user', content: message.text };
  if (message.role === 'summary') return { role: 'user', content: `${SUMMARY_HEADER}\n\n${message.text}` };
  if (message.role === 'assistant') {
    return {
      role: 'assistant',
      content: [
        ...(message.text === '' ? [] : [{ type: 'text' as const, text: message.text }]),
        ...message.toolCalls.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.args,
        })),
      ],
    };
  }
  return {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: message.toolCallId,
        toolName: message.toolName,
        // The model reads a failure's real text (what failed, what to try).
        output:
          message.error === undefined
            ? { type: 'text', value: message.output }
            : {
                type: 'error-text',
                value: message.output === '' ? message.error : `${message.output}\n${message.error}`,
              },
      },
    ],
  };
}

const SUMMARY_HEADER = '[Summary of the earlier conversation, which is no longer shown]';

/**
 * The part of the stored history the model sees: after the latest summary, that summary (and an
 * acknowledgement, so roles alternate) followed by every message after the ones it covers — the
 * recent turns it kept out stay in full.
 */
export function toModelView(history: readonly SessionMessage[]): SessionMessage[] {
  return pairToolResults(withLatestSummary(history));
}

/**
 * Every tool call answered right after its assistant message, and no result without its call: a
 * crash between a call and its result (or a provider reusing ids) must not make the history
 * unusable, since providers refuse a call without a result. Missing results read "not run".
 */
function pairToolResults(view: readonly SessionMessage[]): SessionMessage[] {
  const paired: SessionMessage[] = [];
  let open = new Map<string, string>();
  const closeOpen = (at: string) => {
    for (const [toolCallId, toolName] of open) {
      paired.push({
        id: `${toolCallId}-missing`,
        at,
        role: 'tool',
        toolCallId,
        toolName,
        output: '',
        error: 'This tool call has no result: the server stopped before it finished. It may or may not have run.',
        errorKind: 'cancelled',
      });
    }
    open = new Map();
  };
  for (const message of view) {
    if (message.role === 'tool') {
      if (open.delete(message.toolCallId)) paired.push(message);
      continue;
    }
    closeOpen(message.at);
    paired.push(message);
    if (message.role === 'assistant') open = new Map(message.toolCalls.map((call) => [call.toolCallId, call.toolName]));
  }
  closeOpen(new Date().toISOString());
  return paired;
}

function withLatestSummary(history: readonly SessionMessage[]): SessionMessage[] {
  let summaryIndex = -1;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (history[index]?.role === 'summary') {
      summaryIndex = index;
      break;
    }
  }
  if (summaryIndex === -1) return [...history];
  const summary = history[summaryIndex] as Extract<SessionMessage, { role: 'summary' }>;
  const covered = history.findIndex((message) => message.id === summary.coversUntil);
  const acknowledgement: SessionMessage = {
    id: `${summary.id}-ack`,
    at: summary.at,
    role: 'assistant',
    text: 'Understood; I continue from this summary.',
    toolCalls: [],
    model: summary.model,
  };
  return [summary, acknowledgement, ...history.slice(covered + 1).filter((message) => message.role !== 'summary')];
}

/** The stored history as the model sees it. */
export function toModelMessages(messages: readonly SessionMessage[]): ModelMessage[] {
  return messages.map(toModelMessage);
}

function toTools(descriptors: readonly ToolDescriptor[]): ToolSet {
  const tools: ToolSet = {};
  for (const descriptor of descriptors) {
    if (HIDDEN_TOOLS.has(descriptor.name)) continue;
    tools[descriptor.name] = tool({
      description: descriptor.description,
      inputSchema: jsonSchema(descriptor.inputSchema as Parameters<typeof jsonSchema>[0]),
    });
  }
  return tools;
}

/** How nested instructions appear in a read_file result (and how later turns recognise them). */
const INSTRUCTIONS_MARKER = /^\[Instructions from (.+)\]$/gm;

function systemPrompt(options: { workdir: string; workerName: string; instructions: Instructions['files'] }): string {
  const project = options.instructions.map(
    (file) =>
      `Project instructions from ${file.path}${file.truncated ? ' (cut at 64 KB)' : ''}; follow them:\n\n${file.text}`,
  );
  return [
    'You are Molf, a coding agent. You work in a project on a worker machine through tools; use them to look before you change anything, and keep changes minimal and correct.',
    'Every tool call passes an approval gate: a call may be denied by a rule or by the user. Respect a denial and its feedback; do not try to reach the same result another way.',
    `The project directory (workdir) is ${options.workdir} on worker "${options.workerName}". Relative paths are relative to it.`,
    `Current time: ${now()} (${Intl.DateTimeFormat().resolvedOptions().timeZone}).`,
    ...project,
  ].join('\n\n');
}

/** What providers say when a request is longer than the model's context window. */
const CONTEXT_OVERFLOW =
  /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|input is too long|token limit|exceeds the (?:maximum|limit)|reduce the length/i;

function isContextOverflow(error: unknown): boolean {
  const body = (error as { responseBody?: unknown }).responseBody;
  return CONTEXT_OVERFLOW.test(
    `${error instanceof Error ? error.message : String(error)} ${typeof body === 'string' ? body : ''}`,
  );
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const status = (error as { statusCode?: number }).statusCode;
    return status === undefined ? error.message : `HTTP ${status}: ${error.message}`;
  }
  return String(error);
}

/**
 * Runs the turns of every session: the model streams, tool calls go through the approval gate to
 * the session's worker (those of one step in parallel), and each message is stored as soon as it
 * is complete — the prompt before the model is called, every tool result as it arrives.
 */
export function createAgentRunner(options: {
  store: SessionStore;
  events: SessionEvents;
  models: ModelResolver;
  toolCalls: ToolCallRunner;
  /** For the loop's own jobs on the worker (instructions); tool calls go through `toolCalls`. */
  dispatcher: JobDispatcher;
  registry: WorkerRegistry;
  logger: Logger;
  settings?: AgentSettings;
}): AgentRunner {
  const { store, events, models, toolCalls, registry, logger, dispatcher } = options;

  /** AGENTS.md (or CLAUDE.md) files from the worker; none when it cannot answer. */
  async function fetchInstructions(
    workerId: WorkerId,
    options: { forPath?: string; signal: AbortSignal },
  ): Promise<Instructions['files']> {
    const result = await dispatcher.dispatch({
      workerId,
      toolName: INSTRUCTIONS_JOB,
      args: options.forPath === undefined ? {} : { forPath: options.forPath },
      timeoutMs: 10_000,
      signal: options.signal,
    });
    if (result.error !== undefined) return [];
    try {
      return InstructionsSchema.parse(JSON.parse(result.output)).files;
    } catch {
      return [];
    }
  }
  const maxSteps = options.settings?.maxSteps ?? DEFAULT_MAX_STEPS;
  const maxQueue = options.settings?.maxQueue ?? DEFAULT_MAX_QUEUE;
  const turnTimeoutMs = options.settings?.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
  const contextTokens = options.settings?.contextTokens ?? DEFAULT_CONTEXT_TOKENS;
  const streamIdleTimeoutMs = options.settings?.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  const turns = new Map<string, Turn>();
  let closing = false;

  async function runStep(context: {
    sessionId: string;
    turnId: string;
    history: SessionMessage[];
    modelId: string;
    signal: AbortSignal;
    loop: LoopWatch;
    /** Set on the retry after the provider said the request was too long. */
    aggressive: boolean;
    instructions: Instructions['files'];
    /** Instruction files already shown in this session. */
    shown: Set<string>;
  }): Promise<'done' | 'continue' | 'aborted' | 'error' | 'doom_loop' | 'overflow'> {
    const { sessionId, turnId, history, signal } = context;
    const session = store.get(sessionId);
    if (session === undefined) throw new MolfError('session_not_found', `no session ${sessionId}`);
    const registration = registry.registration(session.workerId);
    if (registration === undefined) {
      events.publish(sessionId, {
        type: 'error',
        code: 'worker_offline',
        message: `the session's worker ${session.workerId} is offline: start it again (molf worker) and repeat the prompt`,
      });
      return 'error';
    }
    const { model } = models.resolve({ prompt: context.modelId });
    const result = streamText({
      model,
      system: systemPrompt({
        workdir: registration.workdir,
        workerName: registration.name,
        instructions: context.instructions,
      }),
      messages: toModelMessages(pruneHistory(toModelView(history), { contextTokens, aggressive: context.aggressive })),
      tools: toTools(registration.tools),
      abortSignal: signal,
      timeout: { firstChunkMs: streamIdleTimeoutMs * 5, chunkMs: streamIdleTimeoutMs },
      maxRetries: 1,
      // Errors arrive as stream parts below; the SDK's default handler would print them.
      onError: () => {},
    });

    let text = '';
    const calls: Array<{ toolCallId: string; toolName: string; input: unknown }> = [];
    let failure: unknown;
    let finishReason: string | undefined;
    let usage: { inputTokens?: number; outputTokens?: number } | undefined;
    try {
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'text-delta':
            text += part.text;
            events.publish(sessionId, { type: 'message.delta', turnId, text: part.text });
            break;
          case 'tool-call':
            calls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
            break;
          case 'finish-step':
            finishReason = part.finishReason;
            usage = {
              ...(part.usage.inputTokens === undefined ? {} : { inputTokens: part.usage.inputTokens }),
              ...(part.usage.outputTokens === undefined ? {} : { outputTokens: part.usage.outputTokens }),
            };
            break;
          case 'error':
            failure = part.error;
            break;
          case 'abort':
            // Not our abort: the SDK's stream timeout fired on a stalled provider.
            if (!signal.aborted) {
              failure ??= new Error(
                `the model stream stalled: nothing arrived for ${Math.round(streamIdleTimeoutMs / 1000)} s`,
              );
            }
            break;
          default:
            break;
        }
      }
    } catch (error) {
      // A connection broken mid-stream surfaces as a thrown error rather than an error part.
      if (!signal.aborted) failure ??= error;
    }
    const aborted = signal.aborted;

    if (text !== '' || calls.length > 0) {
      const message: SessionMessage = {
        id: randomUUID(),
        at: now(),
        role: 'assistant',
        text,
        toolCalls: calls.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args:
            typeof call.input === 'object' && call.input !== null && !Array.isArray(call.input)
              ? (call.input as Record<string, unknown>)
              : {},
        })),
        model: context.modelId,
        ...(finishReason === undefined ? {} : { finishReason }),
        ...(usage === undefined ? {} : { usage }),
        ...(aborted || failure !== undefined ? { interrupted: true } : {}),
      };
      await store.append(sessionId, message);
      history.push(message);
      events.publish(sessionId, { type: 'message.completed', turnId, message });
    }
    // The request was too long for the model and nothing came back: the caller retries once with
    // everything old pruned hard, instead of failing every turn from now on.
    if (
      failure !== undefined &&
      !aborted &&
      !context.aggressive &&
      text === '' &&
      calls.length === 0 &&
      isContextOverflow(failure)
    ) {
      logger.warn({ sessionId }, 'the model refused the request as too long; retrying with old content pruned');
      return 'overflow';
    }
    if (failure !== undefined && !aborted) {
      await closeOrphans({ sessionId, history, calls, reason: 'The model call failed before this tool call ran.' });
      events.publish(sessionId, { type: 'error', code: 'provider_error', message: describeError(failure) });
      return 'error';
    }
    if (aborted) {
      await closeOrphans({ sessionId, history, calls, reason: 'Tool execution was cancelled.' });
      return 'aborted';
    }
    if (calls.length === 0) return 'done';

    // Doom-loop watch, in call order: the 3rd identical call in a row gets a warning with its
    // result; a second such repetition is not run, and the turn ends.
    const verdicts = calls.map((call) => context.loop.observe(call.toolName, call.input));
    const stopped = verdicts.includes('stop');
    await Promise.all(
      calls.map(async (call, index) => {
        const verdict = verdicts[index];
        const args =
          typeof call.input === 'object' && call.input !== null && !Array.isArray(call.input)
            ? (call.input as Record<string, unknown>)
            : undefined;
        events.publish(sessionId, {
          type: 'tool-call.started',
          turnId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          args: args ?? {},
        });
        let toolResult: ToolResult =
          verdict === 'stop'
            ? {
                output: '',
                error: 'Not run: the same call was repeated again after a warning; the turn ends here.',
                meta: { errorKind: 'cancelled' },
              }
            : args === undefined
              ? { output: '', error: 'The arguments must be a JSON object.', meta: { errorKind: 'invalid_arguments' } }
              : await toolCalls.run({
                  sessionId,
                  workerId: session.workerId,
                  tool: call.toolName,
                  args,
                  // Our own id: providers may reuse theirs across turns.
                  toolCallId: `tc_${randomUUID()}` as ToolCallId,
                  signal,
                });
        // Instructions of the directories a read file lives in, each shown once per session.
        if (call.toolName === 'read_file' && toolResult.error === undefined && typeof args?.path === 'string') {
          const nested = (await fetchInstructions(session.workerId, { forPath: args.path, signal })).filter(
            (file) => !context.shown.has(file.path),
          );
          for (const file of nested) context.shown.add(file.path);
          if (nested.length > 0) {
            const notes = nested.map((file) => `[Instructions from ${file.path}]\n${file.text}`).join('\n\n');
            toolResult = { ...toolResult, output: `${toolResult.output}\n\n${notes}` };
          }
        }
        if (verdict === 'warn') {
          toolResult = {
            ...toolResult,
            output: `${toolResult.output}\n\n[Molf: this is the third identical ${call.toolName} call in a row. You appear to be repeating the same action; try a different approach.]`,
          };
        }
        const message: SessionMessage = {
          id: randomUUID(),
          at: now(),
          role: 'tool',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: toolResult.output,
          ...(toolResult.error === undefined ? {} : { error: toolResult.error }),
          ...(toolResult.meta?.errorKind === undefined ? {} : { errorKind: String(toolResult.meta.errorKind) }),
          ...(toolResult.meta?.truncated === true ? { truncated: true } : {}),
        };
        await store.append(sessionId, message);
        history.push(message);
        events.publish(sessionId, {
          type: 'tool-call.ended',
          turnId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: toolResult.output,
          ...(toolResult.error === undefined ? {} : { error: toolResult.error }),
          ...(toolResult.meta?.errorKind === undefined ? {} : { errorKind: String(toolResult.meta.errorKind) }),
          truncated: toolResult.meta?.truncated === true,
        });
      }),
    );
    if (signal.aborted) return 'aborted';
    if (stopped) {
      events.publish(sessionId, {
        type: 'error',
        code: 'doom_loop',
        message: 'the model kept repeating the same tool call after a warning; the turn was ended',
      });
      return 'doom_loop';
    }
    return 'continue';
  }

  /**
   * After a turn whose last request filled most of the context window, older messages are
   * summarised (the recent turns stay in full). A failure is logged; the turn already succeeded.
   */
  async function compactIfNeeded(context: {
    sessionId: string;
    history: SessionMessage[];
    modelId: string;
    signal: AbortSignal;
  }): Promise<void> {
    const lastAnswer = [...context.history].reverse().find((message) => message.role === 'assistant');
    const used = lastAnswer?.role === 'assistant' ? (lastAnswer.usage?.inputTokens ?? 0) : 0;
    if (used < contextTokens * SUMMARIZING.triggerShare) return;
    try {
      const summary = await summarizeHistory({
        view: toModelView(context.history),
        model: models.resolve({ prompt: context.modelId }).model,
        modelId: context.modelId,
        signal: context.signal,
      });
      if (summary === undefined) return;
      await store.append(context.sessionId, summary);
      context.history.push(summary);
      events.publish(context.sessionId, {
        type: 'context.compacted',
        summaryMessageId: summary.id,
        coversUntil: summary.coversUntil,
      });
    } catch (error) {
      logger.warn(
        { err: error, sessionId: context.sessionId },
        'summarising the session failed; it goes on unsummarised',
      );
    }
  }

  /** Every tool call of the history gets a result, so the next request to the model is valid. */
  async function closeOrphans(context: {
    sessionId: string;
    history: SessionMessage[];
    calls: ReadonlyArray<{ toolCallId: string; toolName: string }>;
    reason: string;
  }): Promise<void> {
    const answered = new Set(
      context.history.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])),
    );
    for (const call of context.calls) {
      if (answered.has(call.toolCallId)) continue;
      const message: SessionMessage = {
        id: randomUUID(),
        at: now(),
        role: 'tool',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: '',
        error: context.reason,
        errorKind: 'cancelled',
      };
      await store.append(context.sessionId, message);
      context.history.push(message);
    }
  }

  async function runTurn(sessionId: string, prompt: Queued, turn: Turn): Promise<void> {
    const turnId = randomUUID();
    turn.controller = new AbortController();
    const { signal } = turn.controller;
    const timer = setTimeout(
      () => turn.controller.abort(new MolfError('timeout', 'the turn timed out')),
      turnTimeoutMs,
    );
    timer.unref();
    let reason: 'completed' | 'aborted' | 'error' | 'step_limit' | 'doom_loop' = 'completed';
    try {
      const session = store.get(sessionId);
      if (session === undefined) return;
      if (prompt.stored === 'queue') {
        // Stored before the model is called: from here a crash still keeps the prompt in the history.
        await store.append(sessionId, { id: prompt.messageId, at: now(), role: 'user', text: prompt.text });
        await store.dequeue(sessionId, prompt.messageId);
      }
      let modelId: string;
      try {
        modelId = models.resolve({ prompt: prompt.model, session: session.model }).id;
      } catch (error) {
        // Every stored prompt gets its turn.started and turn.ended, also when it cannot run.
        events.publish(sessionId, { type: 'turn.started', turnId, messageId: prompt.messageId, model: '' });
        events.publish(sessionId, {
          type: 'error',
          code: isMolfError(error) ? error.code : 'internal',
          message: (error as Error).message,
        });
        reason = 'error';
        return;
      }
      events.publish(sessionId, { type: 'turn.started', turnId, messageId: prompt.messageId, model: modelId });
      const history = await store.messages(sessionId);
      reason = 'step_limit';
      const loop = createLoopWatch();
      const instructions = await fetchInstructions(session.workerId, { signal });
      // Instructions count as shown only while the model still sees them (not summarised or pruned away).
      const shown = new Set(
        pruneHistory(toModelView(history), { contextTokens }).flatMap((message) =>
          message.role === 'tool' && message.toolName === 'read_file'
            ? [...message.output.matchAll(INSTRUCTIONS_MARKER)].map((match) => match[1] as string)
            : [],
        ),
      );
      let aggressive = false;
      for (let step = 0; step < maxSteps; step += 1) {
        const outcome = await runStep({
          sessionId,
          turnId,
          history,
          modelId,
          signal,
          loop,
          instructions,
          shown,
          aggressive,
        });
        if (outcome === 'overflow') {
          aggressive = true;
          step -= 1;
          continue;
        }
        if (outcome === 'continue') continue;
        reason = outcome === 'done' ? 'completed' : outcome;
        break;
      }
      if (reason === 'completed') await compactIfNeeded({ sessionId, history, modelId, signal });
      if (reason === 'step_limit') {
        events.publish(sessionId, {
          type: 'error',
          code: 'step_limit',
          message: `the turn stopped after ${maxSteps} model steps; send another prompt to continue`,
        });
      }
    } catch (error) {
      reason = signal.aborted ? 'aborted' : 'error';
      if (!signal.aborted) {
        logger.error({ err: error, sessionId }, 'turn failed');
        events.publish(sessionId, {
          type: 'error',
          code: isMolfError(error) ? error.code : 'internal',
          message: (error as Error).message,
        });
      }
    } finally {
      clearTimeout(timer);
      const cause: unknown = signal.reason;
      if (reason === 'aborted' && isMolfError(cause) && cause.code === 'timeout') {
        reason = 'error';
        events.publish(sessionId, {
          type: 'error',
          code: 'timeout',
          message: `the turn was stopped after ${Math.round(turnTimeoutMs / 60_000)} minutes (agent.turnTimeoutMs)`,
        });
      }
      events.publish(sessionId, { type: 'turn.ended', turnId, reason });
    }
  }

  /** Starts the turn loop of a session; `stored` is the storing of the first prompt, awaited first. */
  function start(sessionId: string, first: Queued, stored: Promise<void>): Turn {
    const turn: Turn = { controller: new AbortController(), queue: [], done: Promise.resolve(), ready: stored };
    turns.set(sessionId, turn);
    store.setStatus(sessionId, 'busy');
    events.publish(sessionId, { type: 'status', status: 'busy' });
    turn.done = (async () => {
      try {
        await stored;
      } catch (error) {
        // The prompt could not be stored: the caller is told so; nothing runs.
        turns.delete(sessionId);
        store.setStatus(sessionId, 'idle');
        events.publish(sessionId, { type: 'status', status: 'idle' });
        logger.error({ err: error, sessionId }, 'cannot store the prompt');
        return;
      }
      let next: Queued | undefined = first;
      while (next !== undefined) {
        await runTurn(sessionId, next, turn);
        // Prompts that came after an abort are run too: the abort emptied the queue it found.
        next = turn.queue.shift();
      }
      turns.delete(sessionId);
      store.setStatus(sessionId, 'idle');
      events.publish(sessionId, { type: 'status', status: 'idle' });
      await store.release(sessionId).catch(() => undefined);
    })();
    return turn;
  }

  return {
    async prompt({ sessionId, text, model }) {
      if (closing) throw new MolfError('cancelled', 'the server is shutting down');
      if (store.get(sessionId) === undefined) {
        throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
      }
      const messageId = randomUUID();
      const at = now();
      const running = turns.get(sessionId);
      if (running === undefined) {
        // Stored before the prompt is acknowledged: an accepted prompt survives any crash.
        const first: Queued = { messageId, text, model, at, stored: 'history' };
        start(sessionId, first, store.append(sessionId, { id: messageId, at, role: 'user', text }));
        await turns.get(sessionId)?.ready;
        return { messageId, queued: false };
      }
      if (running.queue.length >= maxQueue) {
        throw new MolfError('busy', `the session already has ${maxQueue} prompts waiting; wait for the turn to end`);
      }
      const queued: Queued = { messageId, text, model, at, stored: 'queue' };
      running.queue.push(queued);
      await store.enqueue(sessionId, { messageId, text, model, at });
      events.publish(sessionId, {
        type: 'message.queued',
        messageId: queued.messageId,
        position: running.queue.length,
      });
      return { messageId: queued.messageId, queued: true };
    },

    abort(sessionId) {
      const turn = turns.get(sessionId);
      if (turn === undefined) return false;
      // The prompts waiting now are dropped with the turn (the user aborted them too); prompts sent
      // after this run normally.
      for (const dropped of turn.queue.splice(0)) {
        void store.dequeue(sessionId, dropped.messageId).catch((error: unknown) => {
          logger.warn({ err: error, sessionId }, 'cannot remove an aborted prompt from the queue file');
        });
      }
      turn.controller.abort(new MolfError('cancelled', 'aborted by the user'));
      return true;
    },

    busy: (sessionId) => turns.has(sessionId),

    async close() {
      closing = true;
      // Queued prompts stay in their queue files: the next start stores them unanswered.
      for (const turn of turns.values()) {
        turn.queue.length = 0;
        turn.controller.abort(new MolfError('cancelled', 'the server is shutting down'));
      }
      await Promise.all([...turns.values()].map((turn) => turn.done));
    },
  };
}
