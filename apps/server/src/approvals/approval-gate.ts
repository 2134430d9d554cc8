import { randomBytes } from 'node:crypto';
import { isAbsolute, relative } from 'node:path';
import type { Logger } from '@molf/logging';
import {
  agentMayUse,
  describeRule,
  type PermissionEngine,
  type PermissionRule,
  permissionPathArguments,
  type ReadRule,
  type RuleGrant,
  TASK_TOOL,
  type ToolCallEvaluation,
  toReadRules,
} from '@molf/permissions';
import {
  type Approval,
  type ApprovalEvent,
  type ApprovalKind,
  type ApprovalScope,
  isFileChangeTool,
  MolfError,
  type PermissionExplanation,
  type PermissionsProblem,
  type SubjectVerdictInfo,
  type ToolErrorKind,
  type WorkerId,
} from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import { acceptEdit, acceptEditsRule, checkAcceptEditsScope, offersAcceptEdits } from './accept-edits.ts';
import type { AuditGrant, AuditLog, AuditRecord } from './audit-log.ts';
import { checkAnswerScope } from './check-answer-scope.ts';
import { createGrantId } from './grant-id.ts';
import { parseApprovalAnswer } from './parse-approval-answer.ts';
import { createPendingApprovals, type PendingEntry, type Resolution } from './pending-approvals.ts';
import type { PermissionsStore } from './permissions-store.ts';
import { requestFileChangePreview } from './request-file-change-preview.ts';
import {
  CANCELLED_MESSAGE,
  type CallPaths,
  createCallPathResolver,
  NO_CALL_PATHS,
  toPathLookups,
} from './resolve-call-paths.ts';
import type { SessionGrants } from './session-grants.ts';

export type GateRequest = {
  sessionId: string;
  workerId: WorkerId;
  toolCallId: string;
  /** The call's id in the session's messages and events, when it is not `toolCallId`. */
  sessionToolCallId?: string | undefined;
  tool: string;
  args: Record<string, unknown>;
  /**
   * The subagent that made the call: the tools it may use at all (undefined: all but `task`), its own
   * rules (which only narrow the worker's; a deny is a veto), and its parent session.
   */
  agent?: {
    name: string;
    rules: readonly PermissionRule[];
    tools?: readonly string[] | undefined;
    parentSessionId?: string | undefined;
  };
  /** Aborting (the turn was aborted) cancels a pending approval. */
  signal?: AbortSignal;
  /** What waits, as clients show it. Default: a tool call of the session. */
  kind?: ApprovalKind;
  /**
   * Where the call's paths are taken to lead: `predicted` lets a file tool call allowed or denied by
   * rule go without asking the worker first (see `CallPathResolver.predict`); `worker` always asks.
   * Default `predicted`.
   */
  paths?: 'predicted' | 'worker';
  /**
   * Set for a call nobody may be there to answer (a cron job's run): what happens when it asks.
   * `deny` refuses at once unless a client is watching, `wait` asks all the same; either way an
   * approval nobody answers within `waitMs` is denied. Never an allow.
   */
  unattended?: UnattendedAsk | undefined;
  /**
   * Requests of one worker with the same key share one pending approval: a worker that asks again
   * (after a dropped link) joins the question already waiting instead of asking a second time.
   */
  shareKey?: string;
};

/** `200 ms`, `45 s`, `10 min`. */
function formatWait(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1_000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** What an unattended run does when a call asks (see `GateRequest.unattended`). */
export type UnattendedAsk = {
  policy: 'deny' | 'wait';
  waitMs: number;
  /** Says why it runs unattended, in a denial's message: `the cron job "nightly" (cj_…)`. */
  runBy: string;
  /** Whether a person's client is watching for this session's approvals now. */
  watched: () => boolean;
};

type DenyKind = Extract<ToolErrorKind, 'permission_denied' | 'cancelled' | 'worker_offline'>;

export type GateOutcome =
  | {
      type: 'allow';
      /**
       * For grep: the read_file rules the worker applies to every file it searches; for edit_file
       * and write_file: those that keep a file out of the result's diff.
       */
      readRules?: ReadRule[];
      /** Where each path argument led when the call was judged (absolute, canonical). */
      approvedPaths?: Record<string, string>;
      /** The paths were predicted, not asked of the worker: a refusal with meta.pathMoved means judge again. */
      predicted?: boolean;
    }
  | { type: 'deny'; message: string; errorKind: DenyKind };

/**
 * Who answered an approval, kept in the audit log: a client (its credential, connection and the
 * program the connection named), or a one-time link (`link:<nonce prefix>`, see notify/approval-links.ts).
 */
export type Answerer =
  | {
      credentialId: string;
      connectionId: string;
      /** The client program the connection named (`molf-cli/0.1.0`); undefined if it did not. */
      client?: string | undefined;
    }
  | { link: string };

/** An answerer as the audit log and `approval.resolved` name it. */
export function toAnsweredBy(by: Answerer): { by: string; connectionId?: string; client?: string } {
  if ('link' in by) return { by: by.link };
  return {
    by: `client:${by.credentialId}`,
    connectionId: by.connectionId,
    ...(by.client === undefined ? {} : { client: by.client }),
  };
}

export type ApproveOptions = {
  sessionId: string;
  approvalId: string;
  scope: ApprovalScope;
  by: Answerer;
  /** The allow patterns to add instead of the approval's own ("session" or "always"). Default: its own. */
  patterns?: readonly string[] | undefined;
  /** When the grants an "always" answer saves expire (ISO 8601). Default: never. */
  expiresAt?: string | undefined;
};

export type ApprovalGate = {
  /** Decides one call: at once by rule, or after a person answers. Never throws for a denial. */
  check(request: GateRequest): Promise<GateOutcome>;
  explain(options: { workerId: WorkerId; tool: string; args: Record<string, unknown> }): Promise<PermissionExplanation>;
  /**
   * A person's approval. With "session" or "always", `patterns` (edited by the person) replace the
   * approval's `alwaysPatterns`; with "always", `expiresAt` limits the saved grants. Refused with
   * `invalid_input` (nothing saved) for patterns the file would not take or an expiry out of range.
   */
  approve(options: ApproveOptions): Promise<{ applied: boolean }>;
  deny(options: { sessionId: string; approvalId: string; feedback?: string | undefined; by: Answerer }): {
    applied: boolean;
  };
  pending(filter?: { sessionId?: string | undefined; workerId?: string | undefined }): Approval[];
  /** Current problems of permission files, for clients that subscribe late. */
  problems(): PermissionsProblem[];
  /** The permissions store found a broken file: tell the clients. */
  reportProblem(problem: PermissionsProblem): void;
  /** The permissions store read a good file after a problem. */
  reportValid(workerId: WorkerId): void;
  /** Records a change of a worker's rules made by a person (`permissions.write`), and re-judges its waiting approvals. */
  recordRulesChange(options: { workerId: WorkerId; by: Answerer }): void;
  /**
   * A worker's rules may have changed: its waiting approvals that the rules now allow go ahead, and
   * those they now deny are refused. Also runs by itself when the file changes on disk.
   */
  rulesChanged(workerId: WorkerId): Promise<void>;
  /** Cancels the pending approval of a request with this `shareKey` (the requester no longer needs it). */
  withdraw(options: { workerId: WorkerId; shareKey: string; reason: string }): { withdrawn: boolean };
  /** Live events; the listener must not throw. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
  /** A worker went offline: its pending approvals are denied with a reason. */
  workerOffline(workerId: WorkerId): void;
  /** Forgets a session's "session" answers (session deleted). */
  clearSession(sessionId: string): void;
  /** Cancels every pending approval (server shutdown). */
  close(): void;
};

const CANCELLED: GateOutcome = { type: 'deny', message: CANCELLED_MESSAGE, errorKind: 'cancelled' };

function toSubjectInfo(evaluation: ToolCallEvaluation): SubjectVerdictInfo[] {
  return evaluation.verdicts.map(({ subject, decision }) => ({
    kind: subject.kind,
    label: subject.label,
    decision: decision.type,
    ...(decision.rule === undefined ? {} : { rule: describeRule(decision.rule) }),
  }));
}

function reasonOf(evaluation: ToolCallEvaluation): string {
  const { decision } = evaluation;
  switch (decision.type) {
    case 'allow':
      return `allowed by ${describeRule(decision.rule)}`;
    case 'deny':
      return `${decision.veto ? 'vetoed' : 'denied'} by ${describeRule(decision.rule)}`;
    case 'ask':
      return decision.reason;
  }
}

function refusal(request: GateRequest, evaluation: ToolCallEvaluation): string {
  const subject = evaluation.decidedBy;
  const what = subject === undefined ? request.tool : `${request.tool} on "${subject.label}"`;
  return (
    `Permission denied: ${what} is ${reasonOf(evaluation)}. ` +
    'This rule is set by the user; do not try to reach the same result another way. Ask the user if it is needed.'
  );
}

/** Why a subagent may not use this tool at all (not in its tools, or `task`: no nesting); undefined when it may. */
function outsideAgentTools(request: Pick<GateRequest, 'agent' | 'tool'>): string | undefined {
  const { agent, tool } = request;
  if (agent === undefined || agentMayUse({ tools: agent.tools }, tool)) return undefined;
  if (tool === TASK_TOOL) {
    return `Permission denied: subagents cannot start subagents; the ${agent.name} agent has no task tool.`;
  }
  const tools = agent.tools ?? [];
  return (
    `Permission denied: the ${agent.name} agent may not use ${tool}` +
    ` (its tools: ${tools.length === 0 ? 'none' : tools.join(', ')}). Do the task with those tools, or report what you could not do.`
  );
}

function isInside(path: string, root: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Makes an evaluation ask (never allow) for a reason the rules can't see. */
function atMostAsk(evaluation: ToolCallEvaluation, reason: string): ToolCallEvaluation {
  if (evaluation.decision.type !== 'allow') return evaluation;
  const { alwaysNote: _note, ...rest } = evaluation;
  return { ...rest, decision: { type: 'ask', rule: undefined, reason }, alwaysPatterns: null };
}

export function createApprovalGate(options: {
  engine: PermissionEngine;
  store: PermissionsStore;
  registry: WorkerRegistry;
  dispatcher: JobDispatcher;
  audit: AuditLog;
  logger: Logger;
  /**
   * Canonical directories no tool may touch, whatever the rules say: the server's data directory
   * holds every worker's rules, the credentials and the audit log.
   */
  protectedRoots: readonly string[];
  /** The session-scoped answers ("allow for this session", "accept edits"), kept for every server. */
  sessionGrants: SessionGrants;
  /**
   * The clock rules are judged by, in ms since the epoch: a rule past its `expires` no longer
   * applies, and a grant's expiry must lie ahead of it. Default `Date.now`; tests move time with it.
   */
  now?: () => number;
  /**
   * How long an edit_file or write_file approval waits for the worker's preview of the change
   * before it is published without one. Default `DEFAULT_PREVIEW_TIMEOUT_MS` (3 s).
   */
  previewTimeoutMs?: number;
}): ApprovalGate {
  const { engine, store, registry, audit, logger, sessionGrants } = options;
  const now = options.now ?? Date.now;
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const problems = new Map<WorkerId, PermissionsProblem>();
  /** Stops watching a worker's rules file; set while the worker has approvals waiting. */
  const watchers = new Map<WorkerId, () => void>();
  const resolver = createCallPathResolver({ ...options, now });
  const pending = createPendingApprovals({
    onSettled(entry, result, subjects) {
      const { approval } = entry;
      unwatchIfIdle(approval.workerId);
      audit.append({
        sessionId: approval.sessionId,
        workerId: approval.workerId,
        toolCallId: approval.toolCallId,
        tool: approval.tool,
        subjects: [...(subjects ?? approval.subjects.map((subject) => subject.label))],
        decision: result.outcome,
        by: result.by,
        approvalId: approval.approvalId,
        ...(result.scope === undefined ? {} : { scope: result.scope }),
        ...(result.connectionId === undefined ? {} : { connectionId: result.connectionId }),
        ...(result.client === undefined ? {} : { client: result.client }),
        ...(result.added === undefined ? {} : result.added),
      });
      emit({
        type: 'approval.resolved',
        approvalId: approval.approvalId,
        sessionId: approval.sessionId,
        outcome: result.outcome,
        by: result.by,
        ...(result.scope === undefined ? {} : { scope: result.scope }),
        ...(result.reason === undefined ? {} : { reason: result.reason }),
      });
    },
  });

  function emit(event: ApprovalEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.error({ err: error }, 'approval event listener failed');
      }
    }
  }

  function record(request: GateRequest, fields: Omit<AuditRecord, 'workerId' | 'sessionId' | 'toolCallId' | 'tool'>) {
    audit.append({
      sessionId: request.sessionId,
      workerId: request.workerId,
      toolCallId: request.toolCallId,
      tool: request.tool,
      ...fields,
    });
  }

  /** The deny of the built-in protection, when a path of the call leads into a protected root. */
  function protectedPath(request: Pick<GateRequest, 'tool' | 'args'>, callPaths: CallPaths) {
    const { paths } = callPaths;
    for (const given of new Set([...permissionPathArguments(request.tool, request.args), ...paths.keys()])) {
      for (const form of [given, ...(paths.get(given) ?? [])]) {
        if (!isAbsolute(form)) continue;
        const root = options.protectedRoots.find((candidate) => isInside(form, candidate));
        if (root !== undefined) return { given, root };
      }
    }
    return undefined;
  }

  async function evaluate(
    request: Pick<GateRequest, 'workerId' | 'tool' | 'args' | 'agent' | 'sessionId'>,
    context: { callPaths: CallPaths; home: string | undefined },
  ): Promise<ToolCallEvaluation> {
    const { rules } = await store.load(request.workerId);
    const granted = sessionGrants.of(request.sessionId);
    let evaluation = engine.evaluate({
      now: now(),
      tool: request.tool,
      args: request.args,
      layers: {
        ...(request.agent === undefined ? {} : { agent: request.agent.rules }),
        file: rules,
        session: granted.rules,
      },
      home: context.home,
      ...toPathLookups(context.callPaths),
    });
    if (granted.acceptEdits) {
      evaluation = acceptEdit(evaluation, { tool: request.tool, rule: acceptEditsRule(request.tool) });
    }
    for (const given of permissionPathArguments(request.tool, request.args)) {
      if ((context.callPaths.paths.get(given) ?? []).length === 0) {
        evaluation = atMostAsk(evaluation, `the worker could not tell where "${given}" really leads`);
      }
    }
    if (context.home === undefined && /~|\$HOME|\$\{HOME\}/.test(JSON.stringify(request.args))) {
      evaluation = atMostAsk(evaluation, 'the worker did not say what ~ means on its machine');
    }
    return evaluation;
  }

  /**
   * Judges waiting approvals again after the rules changed (a "session" or "always" answer, an edit
   * of the file): those the rules now allow go ahead, those they now deny are refused, the rest wait.
   */
  async function rejudge(filter: (approval: Approval) => boolean): Promise<void> {
    for (const entry of pending.list()) {
      const { approvalId } = entry.approval;
      if (!filter(entry.approval) || pending.isClaimed(approvalId)) continue;
      const evaluation = await evaluate(entry.request, entry);
      const subjects = evaluation.verdicts.map((verdict) => verdict.subject.label);
      const by = `rule: ${reasonOf(evaluation)}`;
      if (evaluation.decision.type === 'allow') {
        const gate = await allowed(entry.request, entry);
        if (!pending.isClaimed(approvalId)) pending.settle(approvalId, { outcome: 'approved', by, gate }, subjects);
      } else if (evaluation.decision.type === 'deny' && !pending.isClaimed(approvalId)) {
        const message = refusal(entry.request, evaluation);
        pending.settle(
          approvalId,
          {
            outcome: 'denied',
            by,
            reason: 'a rule added while it waited denies it',
            gate: { type: 'deny', message, errorKind: 'permission_denied' },
          },
          subjects,
        );
      }
    }
  }

  function rulesChanged(workerId: WorkerId): Promise<void> {
    return rejudge((approval) => approval.workerId === workerId);
  }

  /** While a worker has approvals waiting, an edit of its rules file (by hand, by a tool) re-judges them. */
  function watchRules(workerId: WorkerId): void {
    if (watchers.has(workerId)) return;
    const stop = store.watch(workerId, () => {
      rulesChanged(workerId).catch((error: unknown) => {
        logger.error({ err: error, workerId }, 'judging the waiting approvals again failed');
      });
    });
    watchers.set(workerId, stop);
  }

  function unwatchIfIdle(workerId: WorkerId): void {
    if (pending.list({ workerId }).length > 0) return;
    watchers.get(workerId)?.();
    watchers.delete(workerId);
  }

  function deny(
    request: GateRequest,
    options: { message: string; errorKind: DenyKind; subjects: string[] },
  ): GateOutcome {
    record(request, {
      subjects: options.subjects,
      decision: options.errorKind === 'cancelled' ? 'cancelled' : 'deny',
      by: `server: ${options.message}`,
    });
    return { type: 'deny', message: options.message, errorKind: options.errorKind };
  }

  /** A call refused because the audit log cannot keep its record. */
  function unrecorded(failure: Error): GateOutcome {
    return {
      type: 'deny',
      message: `The call was not run: the approval audit log cannot be written (${failure.message}).`,
      errorKind: 'permission_denied',
    };
  }

  /** The gate's decision; an allowed call runs only once its record is stored (it outlives a crash). */
  async function check(request: GateRequest): Promise<GateOutcome> {
    const outcome = await decide(request);
    if (outcome.type !== 'allow') return outcome;
    await audit.stored();
    const failure = audit.failure();
    return failure === undefined ? outcome : unrecorded(failure);
  }

  async function decide(request: GateRequest): Promise<GateOutcome> {
    const given = permissionPathArguments(request.tool, request.args);
    const failure = audit.failure();
    if (failure !== undefined) return unrecorded(failure);
    if (isAborted(request.signal)) {
      return deny(request, { message: CANCELLED_MESSAGE, errorKind: 'cancelled', subjects: given });
    }
    const outside = outsideAgentTools(request);
    if (outside !== undefined) {
      return deny(request, { message: outside, errorKind: 'permission_denied', subjects: [request.tool] });
    }
    // Every judgement of a call starts here: what judging its tool takes is loaded first.
    await engine.prepare(request.tool);
    const folded = request.paths === 'worker' ? undefined : await judgePredicted(request);
    if (folded !== undefined) return folded;
    const resolved = await resolver.resolve({
      workerId: request.workerId,
      tool: request.tool,
      args: request.args,
      ...(request.agent === undefined ? {} : { agentRules: request.agent.rules }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    if (!resolved.ok)
      return deny(request, { message: resolved.message, errorKind: resolved.errorKind, subjects: given });
    const guarded = protectedPath(request, resolved.value);
    if (guarded !== undefined) {
      return deny(request, {
        message:
          `Permission denied: "${guarded.given}" is inside the Molf server's data directory (${guarded.root}), ` +
          'which holds the approval rules, credentials and audit log. No tool may read or change it.',
        errorKind: 'permission_denied',
        subjects: given,
      });
    }
    const home = registry.registration(request.workerId)?.home;
    const context = { callPaths: resolved.value, home };
    const evaluation = await evaluate(request, context);
    const byRule = await decidedByRule(request, evaluation, context);
    if (byRule !== undefined) return byRule;
    const subjects = evaluation.verdicts.map((verdict) => verdict.subject.label);
    // The rules were read asynchronously: the turn may have been aborted meanwhile.
    if (isAborted(request.signal)) {
      return deny(request, { message: CANCELLED_MESSAGE, errorKind: 'cancelled', subjects });
    }
    // Nobody should be asked about a call that cannot run.
    // Connected here, or to another server on the database (the call is routed there).
    if (registry.registration(request.workerId) === undefined) {
      return deny(request, {
        message: `The call was not run: worker ${request.workerId} is offline.`,
        errorKind: 'worker_offline',
        subjects,
      });
    }
    const joined = request.shareKey === undefined ? undefined : pending.join(request.workerId, request.shareKey);
    if (joined !== undefined) {
      logger.info({ tool: request.tool, shareKey: request.shareKey }, 'approval request joined the one waiting');
      return joined;
    }
    const unattended = request.unattended;
    if (unattended !== undefined && unattended.policy === 'deny' && !unattended.watched()) {
      return deny(request, {
        message:
          `The call was not run: it needs approval, and nobody is watching ${unattended.runBy}, whose onAsk policy is "deny". ` +
          'Do not retry it; report what you would have done instead.',
        errorKind: 'permission_denied',
        subjects,
      });
    }
    return ask(request, { evaluation, callPaths: resolved.value, home });
  }

  /** An unattended run's approval that nobody answered in time is denied (after an answer being applied). */
  function denyWhenUnanswered(approval: Approval, answer: Promise<GateOutcome>, unattended: UnattendedAsk): void {
    const timer = setTimeout(() => {
      const reason = `nobody answered within ${formatWait(unattended.waitMs)} (${unattended.runBy}, onAsk "${unattended.policy}")`;
      pending.interrupt(approval.approvalId, {
        outcome: 'denied',
        by: `server: ${reason}`,
        reason,
        gate: {
          type: 'deny',
          message: `The call was not run: it needed approval and ${reason}. Do not retry it; report what you would have done instead.`,
          errorKind: 'permission_denied',
        },
      });
    }, unattended.waitMs);
    timer.unref();
    void answer.finally(() => clearTimeout(timer));
  }

  /**
   * A file tool call judged on where its paths lead if no link is in the way, without a round trip
   * to the worker: an allow pins those paths (the worker refuses the call if one leads elsewhere,
   * and it is judged again), a deny stands. Undefined when the call must ask the worker first — no
   * prediction, or a person must answer (who must see where the path really leads).
   */
  async function judgePredicted(request: GateRequest): Promise<GateOutcome | undefined> {
    const callPaths = resolver.predict(request);
    if (callPaths === undefined || protectedPath(request, callPaths) !== undefined) return undefined;
    const context = { callPaths, home: registry.registration(request.workerId)?.home };
    const outcome = await decidedByRule(request, await evaluate(request, context), context);
    return outcome?.type === 'allow' ? { ...outcome, predicted: true } : outcome;
  }

  /** The outcome when a rule decided the call (recorded in the audit log); undefined when it asks. */
  async function decidedByRule(
    request: GateRequest,
    evaluation: ToolCallEvaluation,
    context: { callPaths: CallPaths; home: string | undefined },
  ): Promise<GateOutcome | undefined> {
    const subjects = evaluation.verdicts.map((verdict) => verdict.subject.label);
    const { decision } = evaluation;
    switch (decision.type) {
      case 'allow':
        record(request, { subjects, decision: 'allow', by: `rule: ${describeRule(decision.rule)}` });
        return await allowed(request, context);
      case 'deny':
        record(request, { subjects, decision: 'deny', by: `rule: ${describeRule(decision.rule)}` });
        return { type: 'deny', message: refusal(request, evaluation), errorKind: 'permission_denied' };
      case 'ask':
        return undefined;
    }
  }

  /**
   * Opens an approval for a person to answer and waits for the answer. An edit_file or write_file
   * call first asks its worker what it would change (bounded by `previewTimeoutMs`).
   */
  async function ask(
    request: GateRequest,
    context: { evaluation: ToolCallEvaluation; callPaths: CallPaths; home: string | undefined },
  ): Promise<GateOutcome> {
    const preview = isFileChangeTool(request.tool)
      ? await requestFileChangePreview({
          dispatcher: options.dispatcher,
          workerId: request.workerId,
          tool: request.tool,
          args: request.args,
          sessionId: request.sessionId,
          readRules: await readRulesOf(request, context.home),
          ...(options.previewTimeoutMs === undefined ? {} : { timeoutMs: options.previewTimeoutMs }),
          signal: request.signal,
        })
      : undefined;
    if (preview !== undefined) {
      // The preview took a round trip to the worker: the turn may have ended, or the worker gone.
      const subjects = context.evaluation.verdicts.map((verdict) => verdict.subject.label);
      if (isAborted(request.signal)) {
        return deny(request, { message: CANCELLED_MESSAGE, errorKind: 'cancelled', subjects });
      }
      // Connected here, or to another server on the database (the call is routed there).
      if (registry.registration(request.workerId) === undefined) {
        return deny(request, {
          message: `The call was not run: worker ${request.workerId} is offline.`,
          errorKind: 'worker_offline',
          subjects,
        });
      }
    }
    const approvalId = `${request.sessionId}:${randomBytes(6).toString('hex')}`;
    const approval: Approval = {
      approvalId,
      kind: request.kind ?? 'tool_call',
      sessionId: request.sessionId,
      workerId: request.workerId,
      toolCallId: request.toolCallId,
      ...(request.sessionToolCallId === undefined ? {} : { sessionToolCallId: request.sessionToolCallId }),
      tool: request.tool,
      ...(request.agent?.parentSessionId === undefined
        ? {}
        : { subagent: { agent: request.agent.name, parentSessionId: request.agent.parentSessionId } }),
      args: request.args,
      reason: reasonOf(context.evaluation),
      subjects: toSubjectInfo(context.evaluation),
      alwaysPatterns: context.evaluation.alwaysPatterns,
      ...(context.evaluation.alwaysNote === undefined ? {} : { alwaysNote: context.evaluation.alwaysNote }),
      ...(preview === undefined ? {} : { preview }),
      offersAcceptEdits: offersAcceptEdits(request),
      requestedAt: new Date().toISOString(),
    };
    const answer = pending.open({ approval, request, callPaths: context.callPaths, home: context.home });
    if (request.unattended !== undefined) denyWhenUnanswered(approval, answer, request.unattended);
    watchRules(request.workerId);
    logger.info({ approvalId, sessionId: request.sessionId, tool: request.tool }, 'approval requested');
    emit({ type: 'approval.requested', approval });
    return answer;
  }

  /** The read_file rules of a call (the worker's, and a subagent's own), as a worker applies them. */
  async function readRulesOf(request: Pick<GateRequest, 'workerId' | 'agent'>, home: string | undefined) {
    const { rules } = await store.load(request.workerId);
    return toReadRules({ rules, agentRules: request.agent?.rules, home, now: now() });
  }

  /**
   * An allow, with what the worker must check when it runs the call: where each path led when it
   * was judged (a link swapped while the call waited for approval is refused), and for grep the
   * read_file rules to apply to every file it searches (for edit_file and write_file, the files
   * whose diff the result must not show).
   */
  async function allowed(
    request: Pick<GateRequest, 'tool' | 'args' | 'workerId' | 'agent'>,
    context: { home: string | undefined; callPaths: CallPaths },
  ): Promise<GateOutcome> {
    const approvedPaths: Record<string, string> = {};
    // Only a file tool's own path is pinned; a shell line's files are judged, not pinned.
    for (const given of permissionPathArguments(request.tool, request.args)) {
      const absolute = context.callPaths.paths.get(given)?.find((form) => isAbsolute(form));
      if (absolute !== undefined) approvedPaths[given] = absolute;
    }
    const withPaths = Object.keys(approvedPaths).length === 0 ? {} : { approvedPaths };
    if (request.tool !== 'grep' && !isFileChangeTool(request.tool)) return { type: 'allow', ...withPaths };
    return {
      type: 'allow',
      ...withPaths,
      readRules: await readRulesOf(request, context.home),
    };
  }

  /**
   * Whether `patterns`, as this answer adds them, let the call run: the worker's rules with the
   * patterns as allow rules that stop questions (as a "session" answer does). The offered patterns
   * do by construction (one per subject that asked); edited ones may not, and the call still runs:
   * the person approved it.
   */
  async function covers(entry: PendingEntry, patterns: readonly string[]): Promise<boolean> {
    const { approval } = entry;
    const { rules } = await store.load(approval.workerId);
    const added = patterns.map(
      (pattern): PermissionRule => ({ tool: approval.tool, pattern, action: 'allow', source: { layer: 'session' } }),
    );
    return (
      engine.evaluate({
        now: now(),
        tool: approval.tool,
        args: approval.args,
        layers: { file: rules, session: added },
        home: entry.home,
        ...toPathLookups(entry.callPaths),
      }).decision.type === 'allow'
    );
  }

  /**
   * Saves the "always" rules of an approval to the worker's file, each as a grant with its own id
   * (refused while the file is broken); returns the grants really added.
   */
  async function saveAlways(
    entry: PendingEntry,
    options: { patterns: readonly string[]; expiresAt: number | undefined; coversCall: boolean },
  ): Promise<AuditGrant[]> {
    const { approval } = entry;
    const { problem } = await store.load(approval.workerId);
    if (problem !== undefined) {
      throw new MolfError(
        'permissions_invalid',
        `"always" cannot be saved while the permissions file is broken (line ${problem.line}, column ${problem.column}: ${problem.message}); approve for the session instead, or fix the file`,
      );
    }
    const grants = new Map(
      options.patterns.map((pattern) => [pattern, { grant: createGrantId(), expiresAt: options.expiresAt }]),
    );
    const added = await store.appendAllow(approval.workerId, {
      tool: approval.tool,
      patterns: options.patterns,
      grants,
      // Rules that do not cover the call are never moved past the user's denies to make it allowed.
      ...(options.coversCall
        ? {
            accepts: (rules: readonly PermissionRule[]) =>
              engine.evaluate({
                now: now(),
                tool: approval.tool,
                args: approval.args,
                layers: { file: rules },
                home: entry.home,
                ...toPathLookups(entry.callPaths),
              }).decision.type === 'allow',
          }
        : {}),
    });
    return added.map((pattern) => {
      const grant = grants.get(pattern) as RuleGrant;
      return {
        grantId: grant.grant,
        pattern,
        ...(grant.expiresAt === undefined ? {} : { expiresAt: new Date(grant.expiresAt).toISOString() }),
      };
    });
  }

  async function approve({ sessionId, approvalId, by, ...options }: ApproveOptions): Promise<{ applied: boolean }> {
    // Checked before the approval is taken: a refused answer leaves it waiting, untouched.
    const answer = parseApprovalAnswer({ ...options, now: now() });
    const { scope } = answer;
    const entry = pending.claim(sessionId, approvalId);
    if (entry === undefined) return { applied: false };
    const { approval } = entry;
    let answered: Resolution;
    let current: ToolCallEvaluation;
    let patterns: readonly string[] = [];
    try {
      checkAnswerScope({ approval, scope, patterns: answer.patterns });
      if (scope === 'edits') checkAcceptEditsScope(approval);
      // "edits" adds no pattern: the session's later edits are judged by acceptEdit.
      const addsNoRules = scope === 'once' || scope === 'edits';
      patterns = addsNoRules ? [] : (answer.patterns ?? approval.alwaysPatterns ?? []);
      const coversCall = addsNoRules || (await covers(entry, patterns));
      // Rules may have changed while the prompt waited: a deny added since wins over the answer.
      current = await evaluate(entry.request, entry);
      const person = toAnsweredBy(by);
      answered = {
        outcome: 'approved',
        ...person,
        scope,
        ...(addsNoRules
          ? {}
          : {
              added: {
                rules: [...patterns],
                coversCall,
                ...(answer.patterns === undefined ? {} : { offeredPatterns: approval.alwaysPatterns ?? [] }),
              },
            }),
        gate: await allowed(entry.request, entry),
      };
      if (current.decision.type !== 'deny' && scope === 'always') {
        const grants = await saveAlways(entry, { patterns, expiresAt: answer.expiresAt, coversCall });
        audit.append({
          workerId: approval.workerId,
          sessionId: approval.sessionId,
          approvalId: approval.approvalId,
          toolCallId: approval.toolCallId,
          tool: approval.tool,
          subjects: approval.subjects.map((subject) => subject.label),
          decision: 'rules_changed',
          ...person,
          scope: 'always',
          rules: grants.map((grant) => grant.pattern),
          grants,
          coversCall,
          ...(answer.patterns === undefined ? {} : { offeredPatterns: approval.alwaysPatterns ?? [] }),
        });
        logger.info(
          { workerId: approval.workerId, tool: approval.tool, grants },
          'allow rules saved to the permissions file',
        );
      }
      // "always" is the worker's grant alone: a session copy would outlive its expiry and its revocation.
      if (current.decision.type !== 'deny' && scope === 'session') {
        await sessionGrants.add(sessionId, { rules: patterns.map((pattern) => ({ tool: approval.tool, pattern })) });
      }
      if (current.decision.type !== 'deny' && scope === 'edits')
        await sessionGrants.add(sessionId, { acceptEdits: true });
    } catch (error) {
      pending.release(approvalId);
      throw error;
    }
    if (current.decision.type === 'deny') {
      pending.settle(approvalId, {
        outcome: 'denied',
        by: `rule: ${reasonOf(current)}`,
        reason: 'a deny rule added while the call waited now covers it',
        gate: { type: 'deny', message: refusal(entry.request, current), errorKind: 'permission_denied' },
      });
      return { applied: false };
    }
    // An abort or a worker going offline during the save came after the answer: the answer stands,
    // and the call itself is then cancelled or fails at dispatch.
    pending.settle(approvalId, answered);
    // Other waiting calls the new rules allow go ahead: the session's, or with "always" the worker's.
    if (scope === 'session' || scope === 'edits') await rejudge((waiting) => waiting.sessionId === sessionId);
    if (scope === 'always') await rulesChanged(approval.workerId);
    return { applied: true };
  }

  return {
    check,

    async explain({ workerId, tool, args }) {
      await engine.prepare(tool);
      const resolved = await resolver.resolve({ workerId, tool, args });
      const callPaths = resolved.ok ? resolved.value : NO_CALL_PATHS;
      const evaluation = await evaluate(
        { workerId, tool, args, sessionId: '' },
        { callPaths, home: registry.registration(workerId)?.home },
      );
      const guarded = protectedPath({ tool, args }, callPaths);
      return {
        decision: guarded === undefined ? evaluation.decision.type : 'deny',
        reason:
          guarded === undefined
            ? reasonOf(evaluation)
            : `denied: "${guarded.given}" is inside the server's data directory`,
        subjects: toSubjectInfo(evaluation),
        problems: [
          ...evaluation.problems,
          ...(resolved.ok ? [] : [`paths not resolved on the worker: ${resolved.message}`]),
        ],
        alwaysPatterns: guarded === undefined ? evaluation.alwaysPatterns : null,
        ...(guarded === undefined && evaluation.alwaysNote !== undefined ? { alwaysNote: evaluation.alwaysNote } : {}),
      };
    },

    approve,

    deny({ sessionId, approvalId, feedback, by }) {
      const entry = pending.claim(sessionId, approvalId);
      if (entry === undefined) return { applied: false };
      const trimmed = feedback?.trim();
      const what =
        entry.approval.kind === 'mcp_server' ? 'starting this MCP server' : `this ${entry.approval.tool} call`;
      const message =
        trimmed === undefined || trimmed === ''
          ? `The user denied ${what}. Do not retry it; ask the user how to proceed.`
          : `The user denied ${what} with this feedback: ${trimmed}`;
      pending.settle(approvalId, {
        outcome: 'denied',
        ...toAnsweredBy(by),
        ...(trimmed === undefined || trimmed === '' ? {} : { reason: trimmed }),
        gate: { type: 'deny', message, errorKind: 'permission_denied' },
      });
      return { applied: true };
    },

    pending: (filter = {}) => pending.list(filter).map((entry) => entry.approval),

    problems: () => [...problems.values()],

    reportProblem(problem) {
      problems.set(problem.workerId, problem);
      emit({ type: 'permissions.invalid', problem });
    },

    reportValid(workerId) {
      if (problems.delete(workerId)) emit({ type: 'permissions.valid', workerId });
    },

    recordRulesChange({ workerId, by }) {
      audit.append({
        workerId,
        subjects: [store.pathOf(workerId)],
        decision: 'rules_changed',
        ...toAnsweredBy(by),
      });
      rulesChanged(workerId).catch((error: unknown) => {
        logger.error({ err: error, workerId }, 'judging the waiting approvals again failed');
      });
    },

    rulesChanged,

    withdraw({ workerId, shareKey, reason }) {
      const entry = pending.list({ workerId }).find((candidate) => candidate.request.shareKey === shareKey);
      if (entry === undefined) return { withdrawn: false };
      pending.interrupt(entry.approval.approvalId, { outcome: 'cancelled', by: 'server', reason, gate: CANCELLED });
      return { withdrawn: true };
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    workerOffline(workerId) {
      for (const entry of pending.list({ workerId })) {
        const reason = `worker ${workerId} went offline`;
        pending.interrupt(entry.approval.approvalId, {
          outcome: 'denied',
          by: 'server',
          reason,
          gate: {
            type: 'deny',
            message: `The call was not run: ${reason} while it waited for approval.`,
            errorKind: 'worker_offline',
          },
        });
      }
    },

    clearSession(sessionId) {
      sessionGrants.remove(sessionId).catch((error: unknown) => {
        logger.warn({ err: error, sessionId }, 'cannot delete the grants of a deleted session');
      });
    },

    close() {
      for (const stop of watchers.values()) stop();
      watchers.clear();
      for (const entry of pending.list()) {
        pending.settle(entry.approval.approvalId, {
          outcome: 'cancelled',
          by: 'server',
          reason: 'the server is shutting down',
          gate: {
            type: 'deny',
            message: 'The call was not run: the server is shutting down.',
            errorKind: 'cancelled',
          },
        });
      }
    },
  };
}
