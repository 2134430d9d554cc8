import { randomUUID } from 'node:crypto';
import {
  addCallUsage,
  addUsageTotals,
  emptyUsageTotals,
  type Instructions,
  isMolfError,
  MolfError,
  type SessionInfo,
  type SessionMessage,
  type ToolDescriptor,
  type UsageTotals,
  type WorkerId,
} from '@molf/protocol';
import { jsonSchema, type ToolSet, tool } from 'ai';
import type { UnattendedAsk } from '../approvals/approval-gate.ts';
import type { AttachmentSupport } from '../providers/resolve-model.ts';
import { toCallUsage } from '../providers/to-call-usage.ts';
import { pruneHistory } from '../sessions/prune-history.ts';
import type { AgentProfile } from './agent-profiles.ts';
import { compactHistory } from './compact-history.ts';
import { cutOffCalls } from './cut-off-calls.ts';
import { attachmentsInView, instructionFilesShown, toModelMessages, toModelView } from './model-view.ts';
import { describeProviderError, isContextOverflow } from './provider-errors.ts';
import { createRepeatCallWatch, type RepeatCallWatch } from './repeat-call-watch.ts';
import { type ModelToolCall, runModelStep } from './run-model-step.ts';
import { runStepToolCalls, toArgs } from './run-step-tool-calls.ts';
import { storeLoadedSkills } from './store-loaded-skills.ts';
import { toSystemPrompt } from './system-prompt.ts';
import type { TurnLimits, TurnServices } from './turn-services.ts';

export type TurnEndReason = 'completed' | 'aborted' | 'error' | 'step_limit' | 'doom_loop';

export type TurnRequest = {
  sessionId: string;
  /** The stored user message this turn answers. */
  messageId: string;
  /** Its text: `turn.started` carries it, so that every client shows the prompt, not only the sender. */
  prompt: string;
  /** The prompt's model, else the session's, else the server default. */
  model: string | undefined;
  /** Aborts the turn: the model stream, running tool calls and pending approvals. */
  signal: AbortSignal;
  /** Skills the person loaded with the prompt: stored first, as `skill` calls and their results. */
  skills?: readonly string[] | undefined;
  /**
   * Set when a subagent runs the turn in its own session: its prompt replaces the project's
   * instructions, and its tools, rules and step limit apply.
   */
  agent?: { profile: AgentProfile; parentSessionId: string } | undefined;
  /** Set when a cron job sent the prompt: `turn.started` carries its id. */
  cronJobId?: string | undefined;
  /** Set when nobody may be there to answer an ask (a cron run): the gate's unattended policy. */
  unattended?: UnattendedAsk | undefined;
  /** The session as read just before the turn (under its lease): not read again. Default: read here. */
  session?: SessionInfo | undefined;
  /**
   * Asked when the turn stops early, with why (its abort's reason, or the error it failed on): what
   * to publish when the session is another instance's to run from here (this one lost its lease, the
   * database went away, this one shuts down with others on the database). The turn then publishes
   * that as its `error` instead of its end, and the instance that runs the session next starts the
   * prompt's turn again. Undefined: the turn ends here.
   */
  handOver?: (cause: unknown) => { code: string; message: string } | undefined;
};

/** What one turn carries from step to step. */
type TurnState = {
  sessionId: string;
  turnId: string;
  workerId: WorkerId;
  modelId: string;
  history: SessionMessage[];
  watch: RepeatCallWatch;
  instructions: Instructions['files'];
  shownInstructions: Set<string>;
  /** Attachments read for this turn's requests, base64 by SHA-256. */
  media: Map<string, string>;
  signal: AbortSignal;
  agent: TurnRequest['agent'];
  unattended: TurnRequest['unattended'];
  /** The model calls of the turn so far (its subagents' are added as their turns end). */
  tally: { usage: UsageTotals };
};

type StepEnd = 'done' | 'continue' | 'aborted' | 'error' | 'doom_loop' | 'overflow';

/**
 * Runs one turn of a session whose prompt is already stored: model steps until the model answers
 * without tool calls, the step limit, an abort or a failure. Every message is stored as soon as it
 * is complete, and every state change is published. It keeps no state between calls, so a turn may
 * run inside another's tool call (a subagent's turn in its own session).
 */
export async function runTurn(
  services: TurnServices,
  limits: TurnLimits,
  request: TurnRequest,
): Promise<TurnEndReason> {
  const { store, events, logger } = services;
  const { sessionId } = request;
  const turnId = randomUUID();
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new MolfError('timeout', 'the turn timed out')), limits.turnTimeoutMs);
  timer.unref();
  const signal = AbortSignal.any([request.signal, timeout.signal]);
  let reason: TurnEndReason = 'completed';
  /** Set when the session goes to another instance from here: what the turn's last event says. */
  let handedOver: { code: string; message: string } | undefined;
  const tally = { usage: emptyUsageTotals() };
  // The subagents this turn starts report their turns' usage in this session's stream; a session
  // runs one turn at a time, so every one of them belongs to this turn.
  const stopCountingSubagents = events.observe(sessionId, (event) => {
    if (event.type === 'subagent.event' && event.event.type === 'turn.ended' && event.event.usage !== undefined) {
      tally.usage = addUsageTotals(tally.usage, event.event.usage);
    }
  });
  try {
    const session = request.session ?? (await store.get(sessionId));
    if (session === undefined) {
      reason = 'error';
      return reason;
    }
    let modelId: string;
    try {
      modelId = services.models.resolve({ prompt: request.model, session: session.model }).id;
    } catch (error) {
      // Every stored prompt gets its turn.started and turn.ended, also when it cannot run.
      events.publish(sessionId, {
        type: 'turn.started',
        turnId,
        messageId: request.messageId,
        prompt: request.prompt,
        model: '',
        ...(request.cronJobId === undefined ? {} : { cronJobId: request.cronJobId }),
      });
      events.publish(sessionId, {
        type: 'error',
        turnId,
        code: isMolfError(error) ? error.code : 'internal',
        message: (error as Error).message,
      });
      reason = 'error';
      return reason;
    }
    events.publish(sessionId, {
      type: 'turn.started',
      turnId,
      messageId: request.messageId,
      prompt: request.prompt,
      model: modelId,
      ...(request.cronJobId === undefined ? {} : { cronJobId: request.cronJobId }),
    });
    const history = await store.messages(sessionId);
    const maxSteps = request.agent?.profile.maxSteps ?? limits.maxSteps;
    reason = 'step_limit';
    const state: TurnState = {
      tally,
      sessionId,
      turnId,
      workerId: session.workerId,
      modelId,
      history,
      watch: createRepeatCallWatch(),
      // A subagent works from its own prompt, not the project's instructions.
      instructions: request.agent === undefined ? await services.instructions.read(session.workerId, { signal }) : [],
      // Instructions count as shown only while the model still sees them (not summarised or pruned away).
      media: new Map(),
      shownInstructions: instructionFilesShown(
        pruneHistory(toModelView(history), { contextTokens: limits.contextTokens }),
      ),
      signal,
      agent: request.agent,
      unattended: request.unattended,
    };
    if (request.skills !== undefined && request.skills.length > 0) {
      await storeLoadedSkills(services, { ...state, names: request.skills });
    }
    // Taken over from a server that died mid-step: its calls are finished before the model goes on.
    const cutOff = cutOffCalls(history, request.messageId);
    if (cutOff !== undefined) {
      await runStepToolCalls(services, { ...state, ...cutOff, reattach: true });
      if (signal.aborted) {
        reason = 'aborted';
        return reason;
      }
    }
    let aggressive = false;
    for (let step = 0; step < maxSteps; step += 1) {
      const end = await takeStep(services, limits, state, { aggressive });
      if (end === 'overflow') {
        aggressive = true;
        step -= 1;
        continue;
      }
      if (end === 'continue') continue;
      reason = end === 'done' ? 'completed' : end;
      break;
    }
    if (reason === 'completed') {
      const summary = await compactHistory(services, {
        sessionId,
        history,
        modelId,
        contextTokens: limits.contextTokens,
        signal,
      });
      if (summary !== undefined) tally.usage = addCallUsage(tally.usage, summary.usage);
    }
    if (reason === 'step_limit') {
      events.publish(sessionId, {
        type: 'error',
        turnId,
        code: 'step_limit',
        message: `the turn stopped after ${maxSteps} model steps; send another prompt to continue`,
      });
    }
  } catch (error) {
    reason = signal.aborted ? 'aborted' : 'error';
    handedOver = signal.aborted ? undefined : request.handOver?.(error);
    if (!signal.aborted && handedOver === undefined) {
      logger.error({ err: error, sessionId }, 'turn failed');
      events.publish(sessionId, {
        type: 'error',
        turnId,
        code: isMolfError(error) ? error.code : 'internal',
        message: (error as Error).message,
      });
    }
  } finally {
    clearTimeout(timer);
    stopCountingSubagents();
    if (reason === 'aborted' && request.signal.aborted) handedOver = request.handOver?.(request.signal.reason);
    if (handedOver !== undefined) {
      events.publish(sessionId, { type: 'error', turnId, ...handedOver });
    } else {
      // Only this turn's own limit: a subagent's turn may also be stopped by its task's time limit.
      if (reason === 'aborted' && timeout.signal.aborted && !request.signal.aborted) {
        reason = 'error';
        events.publish(sessionId, {
          type: 'error',
          turnId,
          code: 'timeout',
          message: `the turn was stopped after ${Math.round(limits.turnTimeoutMs / 60_000)} minutes (agent.turnTimeoutMs)`,
        });
      }
      const sessionUsage = await store.get(sessionId).then(
        (session) => session?.usage,
        () => undefined,
      );
      events.publish(sessionId, {
        type: 'turn.ended',
        turnId,
        reason,
        usage: tally.usage,
        ...(sessionUsage === undefined ? {} : { sessionUsage }),
      });
    }
  }
  return reason;
}

/** One model step and the tool calls it made. */
async function takeStep(
  services: TurnServices,
  limits: TurnLimits,
  state: TurnState,
  options: { aggressive: boolean },
): Promise<StepEnd> {
  const { store, events } = services;
  const { sessionId, turnId, history, signal } = state;
  const registration = services.registry.registration(state.workerId);
  const tools = services.catalog.modelTools(state.workerId, { agent: state.agent?.profile });
  if (registration === undefined || tools === undefined) {
    events.publish(sessionId, {
      type: 'error',
      turnId,
      code: 'worker_offline',
      message: `the session's worker ${state.workerId} is offline: start it again (molf worker) and repeat the prompt`,
    });
    return 'error';
  }
  const resolved = services.models.resolve({ prompt: state.modelId });
  const view = pruneHistory(toModelView(history), {
    contextTokens: limits.contextTokens,
    aggressive: options.aggressive,
  });
  const outcome = await runModelStep({
    model: resolved.model,
    system: toSystemPrompt({
      workdir: registration.workdir,
      workerName: registration.name,
      instructions: state.instructions,
      ...(state.agent === undefined ? {} : { agent: state.agent.profile }),
    }),
    messages: toModelMessages(view, {
      support: resolved.attachments,
      media: await loadMedia(services, state, { view, support: resolved.attachments }),
    }),
    tools: toToolSet(tools),
    signal,
    streamIdleTimeoutMs: limits.streamIdleTimeoutMs,
    onTextDelta: (text) => events.publish(sessionId, { type: 'message.delta', turnId, text }),
  });
  const { end, toolCalls } = outcome;
  const stepId = randomUUID();

  if (outcome.text !== '' || toolCalls.length > 0) {
    const message: SessionMessage = {
      id: stepId,
      at: new Date().toISOString(),
      role: 'assistant',
      text: outcome.text,
      toolCalls: toolCalls.map((call) => ({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        args: toArgs(call.input) ?? {},
      })),
      model: state.modelId,
      ...(outcome.finishReason === undefined ? {} : { finishReason: outcome.finishReason }),
      ...(outcome.usage === undefined ? {} : { usage: toCallUsage(outcome.usage, resolved.price) }),
      ...(end.type === 'finished' ? {} : { interrupted: true }),
    };
    await store.append(sessionId, message);
    history.push(message);
    state.tally.usage = addCallUsage(state.tally.usage, message.usage);
    events.publish(sessionId, { type: 'message.completed', turnId, message });
  }
  switch (end.type) {
    case 'aborted':
      await closeUnanswered(services, state, { calls: toolCalls, reason: 'Tool execution was cancelled.' });
      return 'aborted';
    case 'failed':
      // The request was too long for the model and nothing came back: the turn retries once with
      // everything old pruned hard, instead of failing every turn from now on.
      if (!options.aggressive && outcome.text === '' && toolCalls.length === 0 && isContextOverflow(end.error)) {
        services.logger.warn(
          { sessionId },
          'the model refused the request as too long; retrying with old content pruned',
        );
        return 'overflow';
      }
      await closeUnanswered(services, state, {
        calls: toolCalls,
        reason: 'The model call failed before this tool call ran.',
      });
      events.publish(sessionId, {
        type: 'error',
        turnId,
        code: 'provider_error',
        message: describeProviderError(end.error, {
          provider: state.modelId.slice(0, state.modelId.indexOf('/')),
          secrets: services.models.secrets(state.modelId),
        }),
      });
      return 'error';
    case 'finished':
      break;
  }
  if (toolCalls.length === 0) return 'done';
  const { stopped } = await runStepToolCalls(services, {
    sessionId,
    turnId,
    workerId: state.workerId,
    stepId,
    calls: toolCalls,
    history,
    watch: state.watch,
    shownInstructions: state.shownInstructions,
    modelId: state.modelId,
    agent: state.agent,
    unattended: state.unattended,
    signal,
  });
  if (signal.aborted) return 'aborted';
  if (stopped) {
    events.publish(sessionId, {
      type: 'error',
      turnId,
      code: 'doom_loop',
      message: 'the model kept repeating the same tool call after a warning; the turn was ended',
    });
    return 'doom_loop';
  }
  return 'continue';
}

/** The bytes of the attachments a step shows the model, read once per turn. */
async function loadMedia(
  services: TurnServices,
  state: TurnState,
  options: { view: readonly SessionMessage[]; support: AttachmentSupport },
): Promise<ReadonlyMap<string, string>> {
  for (const attachment of attachmentsInView(options.view)) {
    const image = attachment.mimeType.startsWith('image/');
    const shown = image ? options.support.images : attachment.mimeType === 'application/pdf' && options.support.pdf;
    if (!shown || state.media.has(attachment.sha256)) continue;
    const bytes = await services.store.readAttachment(state.sessionId, attachment.sha256).catch((error: unknown) => {
      services.logger.warn({ err: error, sessionId: state.sessionId }, 'cannot read a stored attachment');
      return undefined;
    });
    if (bytes !== undefined) state.media.set(attachment.sha256, Buffer.from(bytes).toString('base64'));
  }
  return state.media;
}

function toToolSet(descriptors: readonly ToolDescriptor[]): ToolSet {
  const tools: ToolSet = {};
  for (const descriptor of descriptors) {
    tools[descriptor.name] = tool({
      description: descriptor.description,
      inputSchema: jsonSchema(descriptor.inputSchema as Parameters<typeof jsonSchema>[0]),
    });
  }
  return tools;
}

/** Every tool call of the history gets a result, so the next request to the model is valid. */
async function closeUnanswered(
  services: TurnServices,
  state: TurnState,
  context: { calls: readonly ModelToolCall[]; reason: string },
): Promise<void> {
  const answered = new Set(state.history.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])));
  for (const call of context.calls) {
    if (answered.has(call.toolCallId)) continue;
    const message: SessionMessage = {
      id: randomUUID(),
      at: new Date().toISOString(),
      role: 'tool',
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      output: '',
      error: context.reason,
      errorKind: 'cancelled',
    };
    await services.store.append(state.sessionId, message);
    state.history.push(message);
  }
}
