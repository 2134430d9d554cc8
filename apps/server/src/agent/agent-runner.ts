import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMolfError, MolfError, type SessionInfo, type WorkerId } from '@molf/protocol';
import type { UnattendedAsk } from '../approvals/approval-gate.ts';
import type { ApprovalWatchers } from '../approvals/approval-watchers.ts';
import type { SessionLeases } from '../cluster/session-leases.ts';
import type { WorkerPresence } from '../cluster/worker-presence.ts';
import { isConnectionError } from '../database/index.ts';
import type { QueuedPrompt } from '../sessions/index.ts';
import { createTurnsByKey } from '../turns-by-key.ts';
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

/**
 * What the caller of a take knows: the session's worker (a session's worker never changes), as the
 * prompt's check read it or as the instance that woke this one named it; and a prompt this instance
 * just queued, used as it is (its unattended policy watches this instance's clients).
 */
type Known = { workerId: WorkerId; prompt?: Queued };

/** The running turns of a session: each prompt gets its own controller, so an abort ends only the turn running. */
type SessionTurns = {
  /** The session's worker (it never changes). */
  workerId: WorkerId;
  controller: AbortController;
  queue: Queued[];
  done: Promise<void>;
  ready: Promise<void>;
  /** The prompt whose turn runs now. */
  current: string | undefined;
  /** Another instance holds the session now: this one stops without touching its state. */
  lost: boolean;
  /** Lost because the database went away mid-turn: the lease, still this instance's, is given back. */
  giveBack: boolean;
  /**
   * With leases: the last turn ended and the session is being handed over (its idle status stored,
   * then its lease let go). Prompts go through the database meanwhile, and are looked for after.
   */
  ending: boolean;
  /** Prompts an abort dropped: never queued again, though the database may still list them a moment. */
  dropped: Set<string>;
  /** The removal of the dropped prompts from the database, awaited before the queue is read again. */
  dropping: Promise<unknown>;
};

/** How often an instance looks for sessions that need one (prompts waiting, a turn cut off), about. */
const SWEEP_MS = 2_000;
/** How long, and how often, an ended session's idle status is tried again while the database is away. */
const IDLE_RETRY_MS = 15_000;
const IDLE_RETRY_PAUSE_MS = 500;
/** How often one instance runs a prompt again after its turn failed because the database went away. */
const MAX_DATABASE_HANDOVERS = 2;
/** How long a cut-off turn waits for its worker to connect again before it runs anyway (and fails). */
const WORKER_RETURN_MS = 60_000;

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

/** The policy of a run of a cron job that no longer exists: nobody wanted it any more; its asks are denied. */
function goneJobAsk(cronJobId: string): UnattendedAsk {
  return { policy: 'deny', waitMs: 0, runBy: `the cron job ${cronJobId}, since removed,`, watched: () => false };
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
  /**
   * Set when several instances share the database: a session's turns run where its lease is held,
   * prompts arriving elsewhere are queued in the database and wake the holder, and sessions whose
   * holder died are taken over. Default: this process runs every session.
   */
  leases?: SessionLeases | undefined;
  /** With `leases`: where each worker is connected (a session's turns run there when they can). */
  presence?: WorkerPresence | undefined;
  /**
   * The people following this server's approvals: a cron run another server queued asks them.
   * Default none (nobody watches).
   */
  watchers?: ApprovalWatchers | undefined;
  /**
   * The policy of a cron job's run for asks nobody may be there to answer (its `onAsk`), by job:
   * a cron run cut off by its server's end keeps it when it runs again. Undefined for a job that is
   * gone (the run then asks nobody: its asks are denied).
   */
  cronAskOf?: ((cronJobId: string, sessionId: string) => UnattendedAsk | undefined) | undefined;
}): AgentRunner {
  const { services, watchers } = options;
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

  /** Runs one prompt's turn; `session`: as read under the lease just before, not read again. */
  async function runQueued(
    sessionId: string,
    prompt: Queued,
    turns: SessionTurns,
    session?: SessionInfo,
  ): Promise<void> {
    turns.controller = new AbortController();
    turns.current = prompt.messageId;
    if (prompt.stored === 'queue') {
      // Stored before the model is called: from here a crash still keeps the prompt in the history
      // (and no longer in the queue: the same write takes it out).
      await store.append(sessionId, {
        id: prompt.messageId,
        at: new Date().toISOString(),
        role: 'user',
        text: prompt.text,
        ...(prompt.cronJobId === undefined ? {} : { cronJobId: prompt.cronJobId }),
      });
    }
    await runTurn(services, limits, {
      sessionId,
      messageId: prompt.messageId,
      prompt: prompt.text,
      model: prompt.model,
      ...(prompt.skills === undefined ? {} : { skills: prompt.skills }),
      ...(prompt.cronJobId === undefined ? {} : { cronJobId: prompt.cronJobId }),
      ...(prompt.unattended === undefined ? {} : { unattended: prompt.unattended }),
      ...(session === undefined ? {} : { session }),
      signal: turns.controller.signal,
      handOver: (cause) => handOverTurn(turns, cause),
    });
  }

  /** Per prompt, how often its turn was handed over here because the database went away. */
  const databaseHandOvers = new Map<string, number>();

  /**
   * Whether a turn that stops early leaves its session to the instance that runs it next (see
   * `TurnRequest.handOver`): when this one no longer holds it, or when the turn failed because the
   * database could not be reached. Then its lease is given back without an idle status: stored busy,
   * the session is taken (here or elsewhere) once the database answers, and the prompt's turn runs again.
   */
  function handOverTurn(turns: SessionTurns, cause: unknown): { code: string; message: string } | undefined {
    if (!turns.lost) {
      if (leases === undefined || !isConnectionError(cause) || turns.current === undefined) return undefined;
      // A statement that drops its connection every time would run the prompt (and its model
      // call) again for ever: after a few tries here, the turn ends in the error.
      const tries = (databaseHandOvers.get(turns.current) ?? 0) + 1;
      if (tries > MAX_DATABASE_HANDOVERS) return undefined;
      databaseHandOvers.set(turns.current, tries);
      if (databaseHandOvers.size > 1_000) databaseHandOvers.delete(databaseHandOvers.keys().next().value as string);
      turns.lost = true;
      turns.giveBack = true;
      turns.queue.length = 0;
      return {
        code: 'database_unavailable',
        message: `${(cause as Error).message} (the turn stopped, and runs again once the database answers)`,
      };
    }
    if (isMolfError(cause)) return { code: cause.code, message: cause.message };
    return { code: 'conflict', message: 'this server no longer runs the session: another server runs the turn again' };
  }

  const setStatus = (sessionId: string, status: 'busy' | 'idle') => setSessionStatus(services, sessionId, status);

  /**
   * Starts the turn loop of a session; `stored` is the storing of the first prompt, awaited first.
   * `session`: as just read under the lease, handed to the first turn instead of read again.
   */
  function start(
    sessionId: string,
    workerId: WorkerId,
    first: Queued,
    stored: Promise<void>,
    session?: SessionInfo,
  ): SessionTurns {
    const turns: SessionTurns = {
      workerId,
      controller: new AbortController(),
      queue: [],
      done: Promise.resolve(),
      ready: stored,
      // Known from the start: a prompt read from the database queue meanwhile is not queued again.
      current: first.messageId,
      lost: false,
      giveBack: false,
      ending: false,
      dropped: new Set(),
      dropping: Promise.resolve(),
    };
    running.set(sessionId, turns);
    // Stored before the turn runs: a busy status written after its idle one would mark a finished
    // turn as cut off.
    const busy = setStatus(sessionId, 'busy');
    turns.done = (async () => {
      await busy;
      try {
        await stored;
      } catch (error) {
        // The prompt could not be stored: the caller is told so; nothing runs.
        running.delete(sessionId);
        void setStatus(sessionId, 'idle');
        logger.error({ err: error, sessionId }, 'cannot store the prompt');
        return;
      }
      let next: Queued | undefined = first;
      // Only the first turn's: a later one reads the session again (its model may have changed).
      let read = session;
      while (next !== undefined && !turns.lost) {
        const known = read;
        read = undefined;
        try {
          await runQueued(sessionId, next, turns, known);
        } catch (error) {
          // Only storing a queued prompt can throw here (runTurn never throws); its turn never started.
          // It is not read from the queue again by this holder: a refused prompt would otherwise be
          // tried again at once, forever. Refused by the database (not unreachable), it leaves the
          // queue: it would be refused again.
          turns.dropped.add(next.messageId);
          const unreachable = isConnectionError(error);
          if (!unreachable) {
            await store.dequeue(sessionId, next.messageId).catch((dequeueError: unknown) => {
              logger.warn({ err: dequeueError, sessionId }, 'cannot remove a refused prompt from the queue');
            });
          }
          logger.error({ err: error, sessionId, messageId: next.messageId }, 'cannot store a queued prompt');
          events.publish(sessionId, {
            type: 'error',
            code: 'internal',
            message: `a queued prompt could not be stored${unreachable ? ' (it waits in the queue)' : ' and was dropped'}: ${(error as Error).message}`,
          });
        }
        // Prompts that came after an abort are run too: the abort emptied the queue it found.
        // Other instances queue theirs in the database: they are read before the session goes idle.
        if (turns.queue.length === 0 && leases !== undefined && !turns.lost) await pullQueued(sessionId, turns);
        next = turns.queue.shift();
      }
      if (turns.giveBack && leases !== undefined) {
        // In turn with the takings of the session: one that claims it here waits for this release.
        await oneAtATime(sessionId, async () => {
          running.delete(sessionId);
          await leases.release(sessionId).catch((error: unknown) => {
            logger.warn({ err: error, sessionId }, 'cannot give back the lease of a session: it expires instead');
          });
        });
        return;
      }
      if (turns.lost || leases === undefined) {
        running.delete(sessionId);
        if (turns.lost) return;
        void setStatus(sessionId, 'idle');
        await store.idle(sessionId).catch((error: unknown) => {
          logger.warn({ err: error, sessionId }, 'cannot let go of the idle session');
        });
        return;
      }
      turns.ending = true;
      await handOver(sessionId, turns);
    })();
    return turns;
  }

  const { leases, presence } = options;

  /** A waiting prompt as the store keeps it (its unattended policy without the local watch). */
  function toStored(prompt: Queued): QueuedPrompt {
    const { unattended, skills, cronJobId } = prompt;
    return {
      messageId: prompt.messageId,
      text: prompt.text,
      model: prompt.model,
      ...(skills === undefined ? {} : { skills }),
      ...(cronJobId === undefined ? {} : { cronJobId }),
      ...(unattended === undefined
        ? {}
        : { unattended: { policy: unattended.policy, waitMs: unattended.waitMs, runBy: unattended.runBy } }),
      at: prompt.at,
    };
  }

  /**
   * A prompt another instance queued, as this one runs it. A cron run's policy for asks nobody can
   * answer looks at the people following this server's approvals: its turn asks here.
   */
  function fromStore(prompt: QueuedPrompt, sessionId: string, workerId: WorkerId): Queued {
    return {
      messageId: prompt.messageId,
      text: prompt.text,
      model: prompt.model,
      skills: prompt.skills,
      cronJobId: prompt.cronJobId,
      unattended:
        prompt.unattended === undefined
          ? undefined
          : { ...prompt.unattended, watched: () => watchers?.watching({ sessionId, workerId }) ?? false },
      at: prompt.at,
      stored: 'queue',
    };
  }

  /** Adds the prompts other instances queued in the database to the session's local queue. */
  async function pullQueued(sessionId: string, turns: SessionTurns, local?: Queued): Promise<void> {
    let waiting: QueuedPrompt[];
    try {
      await turns.dropping;
      waiting = await store.queued(sessionId);
    } catch (error) {
      logger.warn({ err: error, sessionId }, 'cannot read the prompts queued for a session');
      return;
    }
    const known = new Set([turns.current, ...turns.dropped, ...turns.queue.map((prompt) => prompt.messageId)]);
    for (const prompt of waiting) {
      if (known.has(prompt.messageId)) continue;
      turns.queue.push(local?.messageId === prompt.messageId ? local : fromStore(prompt, sessionId, turns.workerId));
      events.publish(sessionId, { type: 'message.queued', messageId: prompt.messageId, position: turns.queue.length });
    }
  }

  /**
   * The session's turns ended here: its idle status is stored, then its lease goes back — in that
   * order, or an instance that takes the lease would read a finished turn as cut off and run it again.
   * No taking of the session runs here meanwhile. A prompt that came meanwhile runs after.
   */
  async function handOver(sessionId: string, turns: SessionTurns): Promise<void> {
    try {
      const released = await oneAtATime(sessionId, async () => {
        // A lease lost meanwhile: the session is another instance's, status included.
        if (!turns.lost) await storeIdle(sessionId, turns);
        running.delete(sessionId);
        return turns.lost ? undefined : await leases?.release(sessionId);
      });
      // A prompt queued on another instance while this one held the lease woke this one, which was
      // finishing: it is looked for once more now that anyone may take the session.
      if (released?.waiting === true) await take(sessionId);
    } catch (error) {
      // A turn started after the hand-over is not this one's to forget.
      if (running.get(sessionId) === turns) running.delete(sessionId);
      logger.warn({ err: error, sessionId }, 'cannot hand the session over');
    }
  }

  /**
   * Stores the idle status of a session whose turns ended here, again while the database is away (as
   * long as the lease holds, for up to IDLE_RETRY_MS): let go while still stored busy, the session would
   * be taken for one whose turn was cut off, and its last prompt run again.
   */
  async function storeIdle(sessionId: string, turns: SessionTurns): Promise<void> {
    if (await setStatus(sessionId, 'idle')) return;
    const deadline = Date.now() + IDLE_RETRY_MS;
    while (!turns.lost && !closing && Date.now() < deadline) {
      await sleep(IDLE_RETRY_PAUSE_MS);
      try {
        await store.setStatus(sessionId, 'idle');
        return;
      } catch (error) {
        // Refused: the lease is gone, and the status with it. Otherwise logged once already.
        if (isMolfError(error) && error.code === 'conflict') return;
      }
    }
  }

  /** Cut-off sessions whose worker is connected nowhere, since when this instance has seen them so. */
  const orphanedSince = new Map<string, number>();

  /** Per session, the takings and handings over queued here: they run one at a time, in order. */
  const oneAtATime = createTurnsByKey();

  /**
   * Makes sure the session's waiting prompts run: here, when this instance holds or takes its lease
   * (a turn cut off by its holder's death is run again from what is stored), or by the holder, woken.
   * Returns the prompt a turn started with here, if one did.
   */
  function take(sessionId: string, known?: Known): Promise<string | undefined> {
    return oneAtATime(sessionId, () => takeNow(sessionId, known));
  }

  async function takeNow(sessionId: string, known: Known | undefined): Promise<string | undefined> {
    if (leases === undefined || closing) return undefined;
    const turns = running.get(sessionId);
    if (turns !== undefined) {
      // An ending session looks for waiting prompts itself once it is handed over.
      if (!turns.ending) await pullQueued(sessionId, turns);
      return undefined;
    }
    const local = known?.prompt;
    const knownHere = known !== undefined && services.registry.connectedHere(known.workerId) !== undefined;
    // The session is read for its worker, and for its status, which matters below only when neither
    // a local prompt waits nor the worker is connected here.
    const session =
      known !== undefined && (local !== undefined || knownHere)
        ? { workerId: known.workerId, status: undefined }
        : await store.get(sessionId);
    if (session === undefined) return undefined;
    // The turns run where the session's worker is connected, so that its tool calls stay local
    // (a worker that moves mid-turn has its calls routed to it). Connected here, nothing is asked.
    const here = knownHere || services.registry.connectedHere(session.workerId) !== undefined;
    const workerAt = here ? leases.instanceId : await presence?.instanceOf(session.workerId);
    if (workerAt !== undefined && workerAt !== leases.instanceId) {
      await leases.wake(sessionId, { instanceId: workerAt, workerId: session.workerId });
      return undefined;
    }
    if (workerAt === undefined && session.status === 'busy') {
      // A turn cut off with its worker: run again once the worker is back somewhere (the turn
      // would only fail at once), or after the time a worker has to come back.
      const since = orphanedSince.get(sessionId) ?? Date.now();
      orphanedSince.set(sessionId, since);
      if ((await store.queued(sessionId)).length === 0 && Date.now() - since < WORKER_RETURN_MS) return undefined;
    }
    orphanedSince.delete(sessionId);
    if (!(await leases.claim(sessionId))) {
      // Held elsewhere: its holder reads the queue. Only the holder is woken: a wake to every
      // instance would bring this one back here at once, to fail the claim again, for as long as
      // the holder's turn runs. (Let go meanwhile, the one letting go looks at the queue after.)
      const holder = await leases.holderOf(sessionId);
      if (holder !== undefined && holder !== leases.instanceId) await leases.wake(sessionId, { instanceId: holder });
      return undefined;
    }
    if (closing) {
      // Closed while it claimed: another instance runs the session.
      await leases.release(sessionId);
      return undefined;
    }
    try {
      return await startClaimed(leases, sessionId, local);
    } catch (error) {
      // Not started: the lease goes back. Kept, it would be renewed with no turn running, and no
      // other instance could take the session while this one lives.
      await leases.release(sessionId).catch(() => undefined);
      throw error;
    }
  }

  /** Starts the session's waiting prompts under the lease this instance just claimed; none, it lets go. */
  async function startClaimed(
    leases: SessionLeases,
    sessionId: string,
    local: Queued | undefined,
  ): Promise<string | undefined> {
    // Read again under the lease: the status read above may predate the end of the last holder's
    // turn, which stored its idle status before it let the lease go.
    const claimed = await store.get(sessionId);
    if (claimed === undefined) {
      // Deleted meanwhile: nothing to run, and no lease to keep.
      await leases.release(sessionId);
      return undefined;
    }
    const waiting = (await store.queued(sessionId)).map((prompt) =>
      local !== undefined && prompt.messageId === local.messageId
        ? local
        : fromStore(prompt, sessionId, claimed.workerId),
    );
    // A turn cut off by its holder's end runs again first, then the prompts that waited behind it.
    let first = claimed.status === 'busy' ? await interruptedPrompt(sessionId) : undefined;
    first ??= waiting.shift();
    if (first === undefined) {
      await leases.release(sessionId);
      return undefined;
    }
    const started = start(sessionId, claimed.workerId, first, Promise.resolve(), claimed);
    started.queue.push(...waiting);
    return first.messageId;
  }

  /**
   * The prompt of a turn cut off by its instance's death, to run again from the stored history; none
   * when the turn was answered (its instance died, or lost the database, before it stored its status).
   */
  async function interruptedPrompt(sessionId: string): Promise<Queued | undefined> {
    const history = await store.messages(sessionId);
    const prompt = history.findLast((message) => message.role === 'user');
    const last = history.at(-1);
    // An answer cut short (its server shut down mid-stream) is not one.
    const answered = last?.role === 'assistant' && last.toolCalls.length === 0 && last.interrupted !== true;
    if (prompt === undefined || prompt.role !== 'user' || answered) {
      // Its server stored the answer, then stopped before the turn's end: the followers waiting for
      // that end (molf run) get it now.
      const open = answered ? await events.openTurn(sessionId).catch(() => undefined) : undefined;
      if (open !== undefined) events.publish(sessionId, { type: 'turn.ended', turnId: open, reason: 'completed' });
      await setStatus(sessionId, 'idle');
      return undefined;
    }
    logger.warn({ sessionId, messageId: prompt.id }, 'taking over a turn cut off on another instance');
    const { cronJobId } = prompt;
    return {
      messageId: prompt.id,
      text: prompt.text,
      model: undefined,
      skills: undefined,
      cronJobId,
      // A cron run keeps its job's policy: without it, its asks would wait for a person it never had.
      unattended:
        cronJobId === undefined ? undefined : (options.cronAskOf?.(cronJobId, sessionId) ?? goneJobAsk(cronJobId)),
      at: prompt.at,
      stored: 'history',
    };
  }

  const stopWaking = leases?.onWake((sessionId, workerId) => {
    take(sessionId, workerId === undefined ? undefined : { workerId: workerId as WorkerId }).catch((error: unknown) =>
      logger.warn({ err: error, sessionId }, 'cannot take a woken session'),
    );
  });
  const stopAborting = leases?.onAbortRequested((sessionId) => {
    if (running.has(sessionId)) runner.abort(sessionId);
  });
  const stopLosing = leases?.onLost((sessionId, how) => {
    const turns = running.get(sessionId);
    if (turns === undefined) return;
    turns.lost = true;
    turns.queue.length = 0;
    turns.controller.abort(
      how === 'unrenewed'
        ? new MolfError(
            'database_unavailable',
            'this server could not reach the database in time to keep running the session: the turn stops here, and the server that takes the session next runs it again',
          )
        : new MolfError('conflict', 'another server took over the session: it runs the turn again'),
    );
  });
  let sweeping = false;
  const sweep =
    leases === undefined
      ? undefined
      : setInterval(
          () => {
            if (sweeping || closing) return;
            sweeping = true;
            leases
              .unclaimed()
              .then((sessions) => Promise.all(sessions.map((sessionId) => take(sessionId))))
              .catch((error: unknown) => {
                if (!isMolfError(error)) logger.warn({ err: error }, 'cannot look for sessions that need an instance');
              })
              .finally(() => {
                sweeping = false;
              });
          },
          SWEEP_MS + Math.floor(Math.random() * 500),
        );
  sweep?.unref();

  const runner: AgentRunner = {
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
      if (leases !== undefined && (running.get(sessionId)?.ending ?? true)) {
        // Kept in the database first: whichever instance runs the session finds it, and a crash of
        // any instance loses no accepted prompt.
        const local: Queued = { messageId, text, model, skills, cronJobId, unattended, at, stored: 'queue' };
        await store.enqueue(sessionId, toStored(local));
        const first = (await take(sessionId, { workerId: session.workerId, prompt: local })) === messageId;
        if (session.untitled === true && first) void titler.titleFrom({ sessionId, prompt: text });
        return { messageId, queued: !first };
      }
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
        await start(sessionId, session.workerId, first, store.append(sessionId, message)).ready;
        if (session.untitled === true) void titler.titleFrom({ sessionId, prompt: text });
        return { messageId, queued: false };
      }
      if (turns.queue.length >= maxQueue) {
        throw new MolfError('busy', `the session already has ${maxQueue} prompts waiting; wait for the turn to end`);
      }
      const queued: Queued = { messageId, text, model, skills, cronJobId, unattended, at, stored: 'queue' };
      if (leases !== undefined) {
        // Stored first: its turn dequeues it, and a dequeue that came before the enqueue would leave
        // it in the table to be run again.
        await store.enqueue(sessionId, toStored(queued));
        if (running.get(sessionId) !== turns || turns.ending) {
          // The turns ended meanwhile: it is run from the table, as a prompt another server queued.
          return { messageId, queued: (await take(sessionId)) !== messageId };
        }
        // Read from the table with those other servers queued before it: they run first.
        await pullQueued(sessionId, turns, queued);
        return { messageId, queued: true };
      } else {
        turns.queue.push(queued);
        await store.enqueue(sessionId, toStored(queued));
      }
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
      if (turns === undefined) {
        // The session may run on another instance: its holder is asked (and drops the prompts it
        // holds, as here). Told "aborted" only when this one knows that a turn runs.
        leases?.requestAbort(sessionId).catch((error: unknown) => {
          logger.warn({ err: error, sessionId }, 'cannot ask another instance to abort a turn');
        });
        return false;
      }
      // Its turns ended here and it is being handed over: no turn runs to abort.
      if (turns.ending) return false;
      // The prompts waiting now are dropped with the turn (the user aborted them too); prompts sent
      // after this run normally.
      const removals = turns.queue.splice(0).map((dropped) => {
        turns.dropped.add(dropped.messageId);
        return store.dequeue(sessionId, dropped.messageId).catch((error: unknown) => {
          logger.warn({ err: error, sessionId }, 'cannot remove an aborted prompt from the queue file');
        });
      });
      turns.dropping = Promise.all([turns.dropping, ...removals]);
      turns.controller.abort(new MolfError('cancelled', 'aborted by the user'));
      return true;
    },

    busy: (sessionId) => running.has(sessionId) || children.has(sessionId),

    isQueued: (sessionId, messageId) =>
      running.get(sessionId)?.queue.some((prompt) => prompt.messageId === messageId) ?? false,

    async close() {
      closing = true;
      if (sweep !== undefined) clearInterval(sweep);
      stopWaking?.();
      stopAborting?.();
      stopLosing?.();
      // Queued prompts stay in their queue files: the next start stores them unanswered. With other
      // instances on the database, the turns are left to them: the session stays busy, its lease is
      // given back, and another instance runs the turn again from what is stored.
      for (const turns of running.values()) {
        turns.queue.length = 0;
        // A session being handed over finishes that: its turns are done.
        if (leases !== undefined && !turns.ending) turns.lost = true;
        turns.controller.abort(
          turns.lost
            ? new MolfError(
                'cancelled',
                'the server running the turn is shutting down: another server on the database runs it again',
              )
            : new MolfError('cancelled', 'the server is shutting down'),
        );
      }
      await Promise.all([...running.values()].map((turns) => turns.done));
      await titler.close();
    },
  };
  return runner;
}
