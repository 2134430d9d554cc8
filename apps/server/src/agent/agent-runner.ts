import { randomUUID } from 'node:crypto';
import { MolfError, type WorkerId } from '@molf/protocol';
import type { UnattendedAsk } from '../approvals/approval-gate.ts';
import { runSubagent, type SubagentOutcome, type SubagentRun } from './run-subagent.ts';
import { runTurn } from './run-turn.ts';
import { createSessionTitler } from './session-titler.ts';
import { setSessionStatus } from './set-session-status.ts';
import type { TurnLimits, TurnServices } from './turn-services.ts';

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
  /** Subagents (`task` calls) one turn runs at once; the others wait. Default 4. */
  maxParallelTasks?: number;
  /** A subagent is stopped after this. Default 10 min. */
  taskTimeoutMs?: number;
};

export type AgentRunner = {
  /** Starts a turn, or queues the prompt while one runs. */
  prompt(options: {
    sessionId: string;
    text: string;
    model?: string | undefined;
    /** Skills of the session's worker the person loads with the prompt (stored as `skill` results). */
    skills?: string[] | undefined;
    /** Set when a cron job's run sends the prompt: its message and `turn.started` carry the id. */
    cronJobId?: string | undefined;
    /** What an ask does in the prompt's turn when nobody answers (a cron run's `onAsk`). */
    unattended?: UnattendedAsk | undefined;
    /** The stored message's id, chosen by the caller (to know its turn before it starts). Default: a new one. */
    messageId?: string | undefined;
  }): Promise<{ messageId: string; queued: boolean }>;
  /**
   * Runs a subagent's turn in a child session of its own (a `task` call). While it runs, the child is
   * busy and `abort` on it stops it alone. A subagent's session takes no prompts of its own.
   */
  runSubagent(run: SubagentRun): Promise<SubagentOutcome>;
  /** Aborts the running turn (stream, tool calls, approvals) and drops queued prompts; false when idle. */
  abort(sessionId: string): boolean;
  busy(sessionId: string): boolean;
  /** Whether this prompt still waits in its session's queue (its turn has not started). */
  isQueued(sessionId: string, messageId: string): boolean;
  /** Aborts every turn and waits for them to end. */
  close(): Promise<void>;
};

type Queued = {
  messageId: string;
  text: string;
  model: string | undefined;
  skills: string[] | undefined;
  cronJobId: string | undefined;
  unattended: UnattendedAsk | undefined;
  at: string;
  /** Where the prompt is kept until its turn stores it as a message. */
  stored: 'history' | 'queue';
};

/** The running turns of a session: each prompt gets its own controller, so an abort ends only the turn running. */
type SessionTurns = { controller: AbortController; queue: Queued[]; done: Promise<void>; ready: Promise<void> };

const DEFAULT_MAX_STEPS = 10;
const DEFAULT_MAX_QUEUE = 20;
const DEFAULT_TURN_TIMEOUT_MS = 30 * 60_000;
const DEFAULT_CONTEXT_TOKENS = 128_000;
const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 120_000;

/** Refuses a prompt that loads a skill the session's worker does not have (nothing is stored). */
function checkSkills(services: TurnServices, workerId: WorkerId, names: readonly string[]): void {
  const known = services.registry.registration(workerId)?.catalog?.skills.map((skill) => skill.name) ?? [];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  throw new MolfError(
    'invalid_input',
    `no skill named ${unknown.map((name) => `"${name}"`).join(', ')} on this session's worker${known.length === 0 ? ' (it has none, or is offline)' : `; its skills: ${known.join(', ')}`}`,
    { field: 'skills' },
  );
}

export function toTurnLimits(settings: AgentSettings = {}): TurnLimits {
  return {
    maxSteps: settings.maxSteps ?? DEFAULT_MAX_STEPS,
    turnTimeoutMs: settings.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS,
    contextTokens: settings.contextTokens ?? DEFAULT_CONTEXT_TOKENS,
    streamIdleTimeoutMs: settings.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  };
}

/**
 * Runs the turns of every session one after another: a prompt sent while a turn runs waits in the
 * session's queue (kept in a file, so a crash loses none), an abort ends the running turn and drops
 * the waiting prompts, and close ends them all. The turns themselves are `runTurn`'s.
 */
export function createAgentRunner(options: {
  services: TurnServices;
  settings?: AgentSettings;
  /** `provider/model` that titles sessions from their first prompt. Default none: the prompt's first words. */
  titleModel?: string | undefined;
}): AgentRunner {
  const { services } = options;
  const { store, events, logger } = services;
  const titler = createSessionTitler({
    store,
    events,
    models: services.models,
    logger,
    titleModel: options.titleModel,
  });
  const limits = toTurnLimits(options.settings);
  const maxQueue = options.settings?.maxQueue ?? DEFAULT_MAX_QUEUE;
  const running = new Map<string, SessionTurns>();
  /** The subagents running now, by child session: each can be aborted alone. */
  const children = new Map<string, AbortController>();
  let closing = false;

  async function runQueued(sessionId: string, prompt: Queued, turns: SessionTurns): Promise<void> {
    turns.controller = new AbortController();
    if (prompt.stored === 'queue') {
      // Stored before the model is called: from here a crash still keeps the prompt in the history.
      await store.append(sessionId, {
        id: prompt.messageId,
        at: new Date().toISOString(),
        role: 'user',
        text: prompt.text,
        ...(prompt.cronJobId === undefined ? {} : { cronJobId: prompt.cronJobId }),
      });
      await store.dequeue(sessionId, prompt.messageId);
    }
    await runTurn(services, limits, {
      sessionId,
      messageId: prompt.messageId,
      prompt: prompt.text,
      model: prompt.model,
      ...(prompt.skills === undefined ? {} : { skills: prompt.skills }),
      ...(prompt.cronJobId === undefined ? {} : { cronJobId: prompt.cronJobId }),
      ...(prompt.unattended === undefined ? {} : { unattended: prompt.unattended }),
      signal: turns.controller.signal,
    });
  }

  const setStatus = (sessionId: string, status: 'busy' | 'idle') => setSessionStatus(services, sessionId, status);

  /** Starts the turn loop of a session; `stored` is the storing of the first prompt, awaited first. */
  function start(sessionId: string, first: Queued, stored: Promise<void>): SessionTurns {
    const turns: SessionTurns = {
      controller: new AbortController(),
      queue: [],
      done: Promise.resolve(),
      ready: stored,
    };
    running.set(sessionId, turns);
    setStatus(sessionId, 'busy');
    turns.done = (async () => {
      try {
        await stored;
      } catch (error) {
        // The prompt could not be stored: the caller is told so; nothing runs.
        running.delete(sessionId);
        setStatus(sessionId, 'idle');
        logger.error({ err: error, sessionId }, 'cannot store the prompt');
        return;
      }
      let next: Queued | undefined = first;
      while (next !== undefined) {
        try {
          await runQueued(sessionId, next, turns);
        } catch (error) {
          // Only storing a queued prompt can throw here (runTurn never throws); its turn never started.
          logger.error({ err: error, sessionId }, 'cannot store a queued prompt');
          events.publish(sessionId, {
            type: 'error',
            code: 'internal',
            message: `a queued prompt could not be stored: ${(error as Error).message}`,
          });
        }
        // Prompts that came after an abort are run too: the abort emptied the queue it found.
        next = turns.queue.shift();
      }
      running.delete(sessionId);
      setStatus(sessionId, 'idle');
      await store.idle(sessionId).catch((error: unknown) => {
        logger.warn({ err: error, sessionId }, 'cannot let go of the idle session');
      });
    })();
    return turns;
  }

  return {
    async prompt({ sessionId, text, model, skills, cronJobId, unattended, messageId: givenId }) {
      if (closing) throw new MolfError('cancelled', 'the server is shutting down');
      const session = await store.get(sessionId);
      if (session === undefined) {
        throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
      }
      if (session.parent !== undefined) {
        // Its turns are its agent's, with the agent's tools and rules, run for the parent's task call.
        throw new MolfError(
          'invalid_input',
          `session ${sessionId} is the ${session.parent.agent} subagent's session of session ${session.parent.sessionId}: it can be read, not prompted; prompt the parent session`,
          { field: 'sessionId' },
        );
      }
      if (skills !== undefined && skills.length > 0) checkSkills(services, session.workerId, skills);
      const messageId = givenId ?? randomUUID();
      const at = new Date().toISOString();
      const turns = running.get(sessionId);
      if (turns === undefined) {
        // Stored before the prompt is acknowledged: an accepted prompt survives any crash.
        const first: Queued = { messageId, text, model, skills, cronJobId, unattended, at, stored: 'history' };
        const message = {
          id: messageId,
          at,
          role: 'user' as const,
          text,
          ...(cronJobId === undefined ? {} : { cronJobId }),
        };
        await start(sessionId, first, store.append(sessionId, message)).ready;
        if (session.untitled === true) void titler.titleFrom({ sessionId, prompt: text });
        return { messageId, queued: false };
      }
      if (turns.queue.length >= maxQueue) {
        throw new MolfError('busy', `the session already has ${maxQueue} prompts waiting; wait for the turn to end`);
      }
      const queued: Queued = { messageId, text, model, skills, cronJobId, unattended, at, stored: 'queue' };
      turns.queue.push(queued);
      await store.enqueue(sessionId, {
        messageId,
        text,
        model,
        ...(skills === undefined ? {} : { skills }),
        ...(cronJobId === undefined ? {} : { cronJobId }),
        at,
      });
      events.publish(sessionId, { type: 'message.queued', messageId, position: turns.queue.length });
      return { messageId, queued: true };
    },

    async runSubagent(run) {
      if (closing) throw new MolfError('cancelled', 'the server is shutting down');
      const controller = new AbortController();
      let childSessionId: string | undefined;
      try {
        return await runSubagent(services, limits, {
          ...run,
          signal: AbortSignal.any([run.signal, controller.signal]),
          onStarted: (id) => {
            childSessionId = id;
            children.set(id, controller);
          },
        });
      } finally {
        if (childSessionId !== undefined) children.delete(childSessionId);
      }
    },

    abort(sessionId) {
      const child = children.get(sessionId);
      if (child !== undefined) {
        child.abort(new MolfError('cancelled', 'aborted by the user'));
        return true;
      }
      const turns = running.get(sessionId);
      if (turns === undefined) return false;
      // The prompts waiting now are dropped with the turn (the user aborted them too); prompts sent
      // after this run normally.
      for (const dropped of turns.queue.splice(0)) {
        void store.dequeue(sessionId, dropped.messageId).catch((error: unknown) => {
          logger.warn({ err: error, sessionId }, 'cannot remove an aborted prompt from the queue file');
        });
      }
      turns.controller.abort(new MolfError('cancelled', 'aborted by the user'));
      return true;
    },

    busy: (sessionId) => running.has(sessionId) || children.has(sessionId),

    isQueued: (sessionId, messageId) =>
      running.get(sessionId)?.queue.some((prompt) => prompt.messageId === messageId) ?? false,

    async close() {
      closing = true;
      // Queued prompts stay in their queue files: the next start stores them unanswered.
      for (const turns of running.values()) {
        turns.queue.length = 0;
        turns.controller.abort(new MolfError('cancelled', 'the server is shutting down'));
      }
      await Promise.all([...running.values()].map((turns) => turns.done));
      await titler.close();
    },
  };
}
