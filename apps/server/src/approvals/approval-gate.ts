import { randomBytes } from 'node:crypto';
import { isAbsolute, relative } from 'node:path';
import type { Logger } from '@molf/logging';
import {
  describeRule,
  type PermissionEngine,
  type PermissionRule,
  permissionPathArguments,
  type ReadRule,
  type ToolCallEvaluation,
  toReadRules,
} from '@molf/permissions';
import {
  type Approval,
  type ApprovalEvent,
  type ApprovalKind,
  type ApprovalScope,
  MolfError,
  type PermissionExplanation,
  type PermissionsProblem,
  RESOLVE_PATHS_JOB,
  ResolvedPathsSchema,
  type SubjectVerdictInfo,
  type ToolErrorKind,
  toResolvePathsArgs,
  type WorkerId,
} from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { AuditLog, AuditRecord } from './audit-log.ts';
import type { PermissionsStore } from './permissions-store.ts';

export type GateRequest = {
  sessionId: string;
  workerId: WorkerId;
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  /** A subagent's own rules: its deny is a veto nothing overrides. */
  agent?: { name: string; rules: readonly PermissionRule[] };
  /** Aborting (the turn was aborted) cancels a pending approval. */
  signal?: AbortSignal;
  /** What waits, as clients show it. Default: a tool call of the session. */
  kind?: ApprovalKind;
  /**
   * Requests of one worker with the same key share one pending approval: a worker that asks again
   * (after a dropped link) joins the question already waiting instead of asking a second time.
   */
  shareKey?: string;
};

type DenyKind = Extract<ToolErrorKind, 'permission_denied' | 'cancelled' | 'worker_offline'>;

export type GateOutcome =
  | {
      type: 'allow';
      /** For grep: the read_file rules the worker applies to every file it searches. */
      readRules?: ReadRule[];
      /** Where each path argument led when the call was judged (absolute, canonical). */
      approvedPaths?: Record<string, string>;
    }
  | { type: 'deny'; message: string; errorKind: DenyKind };

/** Who answered an approval: the client credential and connection, kept in the audit log. */
export type Answerer = { credentialId: string; connectionId: string };

export type ApprovalGate = {
  /** Decides one call: at once by rule, or after a person answers. Never throws for a denial. */
  check(request: GateRequest): Promise<GateOutcome>;
  explain(options: { workerId: WorkerId; tool: string; args: Record<string, unknown> }): Promise<PermissionExplanation>;
  approve(options: {
    sessionId: string;
    approvalId: string;
    scope: ApprovalScope;
    by: Answerer;
  }): Promise<{ applied: boolean }>;
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

type Resolution = {
  outcome: 'approved' | 'denied' | 'cancelled';
  by: string;
  scope?: ApprovalScope;
  connectionId?: string;
  reason?: string;
  gate: GateOutcome;
};

type PendingApproval = {
  approval: Approval;
  request: GateRequest;
  canonicalPaths: ReadonlyMap<string, readonly string[]>;
  home: string | undefined;
  /**
   * Set while an approve is being applied (an "always" rule is saved): the answer has been taken,
   * so other answers get `applied: false`, and an abort or a worker going offline meanwhile is
   * kept in `interrupted` and only applied if the approve fails.
   */
  claimed: boolean;
  interrupted: Resolution | undefined;
  /** Later requests with the same `shareKey`, answered together with this one. */
  joined: Array<(outcome: GateOutcome) => void>;
  finish(outcome: GateOutcome): void;
};

/** How long the gate waits for the worker to say where paths lead. */
const RESOLVE_PATHS_TIMEOUT_MS = 10_000;

/** Where the answer for a directory read whole is kept in the map of resolved paths (no path holds NUL). */
function treeKey(path: string): string {
  return `\0tree\0${path}`;
}

/** The engine's view of the worker's answers: where each path leads, and what a directory holds. */
function pathLookups(paths: ReadonlyMap<string, readonly string[]>) {
  return {
    canonicalPaths: (given: string) => paths.get(given),
    treeContents: (given: string) => paths.get(treeKey(given)),
  };
}

const CANCELLED_MESSAGE = 'The tool call was cancelled before it was approved.';
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
  return { ...evaluation, decision: { type: 'ask', rule: undefined, reason }, alwaysPatterns: null };
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
}): ApprovalGate {
  const { engine, store, registry, dispatcher, audit, logger } = options;
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const pending = new Map<string, PendingApproval>();
  const sessionRules = new Map<string, PermissionRule[]>();
  const problems = new Map<WorkerId, PermissionsProblem>();
  /** Stops watching a worker's rules file; set while the worker has approvals waiting. */
  const watchers = new Map<WorkerId, () => void>();

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

  async function resolvePaths(
    request: Pick<GateRequest, 'workerId' | 'tool' | 'args' | 'signal'> & Partial<Pick<GateRequest, 'agent'>>,
  ): Promise<
    { ok: true; paths: Map<string, readonly string[]> } | { ok: false; message: string; errorKind: DenyKind }
  > {
    // Every judgement of a call starts here: what judging its tool takes is loaded first.
    await engine.prepare(request.tool);
    // A file tool's path, or the files a shell line reads and writes (its glob patterns expanded there).
    const wanted = engine.pathArguments({
      tool: request.tool,
      args: request.args,
      home: registry.registration(request.workerId)?.home,
    });
    if (wanted.length === 0) return { ok: true, paths: new Map() };
    // At most what one job takes of each kind; the rest is answered with no forms, so the line asks.
    const { args, unsent } = toResolvePathsArgs(wanted);
    // A directory read whole is looked through for a file the read_file rules deny.
    const readRules =
      args.trees === undefined && args.visibleTrees === undefined
        ? undefined
        : toReadRules({
            rules: [...(request.agent?.rules ?? []), ...(await store.load(request.workerId)).rules],
            home: registry.registration(request.workerId)?.home,
          });
    const result = await dispatcher.dispatch({
      workerId: request.workerId,
      toolName: RESOLVE_PATHS_JOB,
      args,
      ...(readRules === undefined ? {} : { readRules }),
      timeoutMs: RESOLVE_PATHS_TIMEOUT_MS,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    if (result.error !== undefined) {
      const kind = String(result.meta?.errorKind);
      if (kind === 'cancelled' || request.signal?.aborted === true) {
        return { ok: false, errorKind: 'cancelled', message: CANCELLED_MESSAGE };
      }
      const offline = ['worker_offline', 'worker_not_found', 'worker_restarted'].includes(kind);
      return {
        ok: false,
        errorKind: offline ? 'worker_offline' : 'permission_denied',
        message: offline
          ? result.error
          : `The approval gate could not learn where the path leads on the worker (${result.error}), so the call was not run.`,
      };
    }
    let parsed: ReturnType<typeof ResolvedPathsSchema.safeParse>;
    try {
      parsed = ResolvedPathsSchema.safeParse(JSON.parse(result.output));
    } catch {
      parsed = ResolvedPathsSchema.safeParse(undefined);
    }
    if (!parsed.success) {
      return {
        ok: false,
        errorKind: 'permission_denied',
        message: 'The worker answered the path check with something unreadable, so the call was not run.',
      };
    }
    const paths = new Map<string, readonly string[]>(parsed.data.paths.map((entry) => [entry.given, entry.forms]));
    for (const entry of parsed.data.trees ?? []) paths.set(treeKey(entry.given), entry.forms);
    for (const path of unsent.paths) paths.set(path, []);
    for (const path of unsent.trees) paths.set(treeKey(path), []);
    return { ok: true, paths };
  }

  /** The deny of the built-in protection, when a path of the call leads into a protected root. */
  function protectedPath(request: Pick<GateRequest, 'tool' | 'args'>, paths: ReadonlyMap<string, readonly string[]>) {
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
    context: { canonicalPaths: ReadonlyMap<string, readonly string[]>; home: string | undefined },
  ): Promise<ToolCallEvaluation> {
    const { rules } = await store.load(request.workerId);
    let evaluation = engine.evaluate({
      tool: request.tool,
      args: request.args,
      layers: {
        ...(request.agent === undefined ? {} : { agent: request.agent.rules }),
        file: rules,
        session: sessionRules.get(request.sessionId) ?? [],
      },
      home: context.home,
      ...pathLookups(context.canonicalPaths),
    });
    for (const given of permissionPathArguments(request.tool, request.args)) {
      if ((context.canonicalPaths.get(given) ?? []).length === 0) {
        evaluation = atMostAsk(evaluation, `the worker could not tell where "${given}" really leads`);
      }
    }
    if (context.home === undefined && /~|\$HOME|\$\{HOME\}/.test(JSON.stringify(request.args))) {
      evaluation = atMostAsk(evaluation, 'the worker did not say what ~ means on its machine');
    }
    return evaluation;
  }

  function settle(entry: PendingApproval, result: Resolution, subjects: readonly string[] | undefined): void {
    const { approval } = entry;
    if (!pending.delete(approval.approvalId)) return;
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
    entry.finish(result.gate);
  }

  /** An abort, a worker going offline or shutdown: applied now, or after an approve in progress fails. */
  function interrupt(entry: PendingApproval, result: Resolution): void {
    if (entry.claimed) entry.interrupted ??= result;
    else settle(entry, result, undefined);
  }

  /**
   * Judges waiting approvals again after the rules changed (a "session" or "always" answer, an edit
   * of the file): those the rules now allow go ahead, those they now deny are refused, the rest wait.
   */
  async function rejudge(filter: (approval: Approval) => boolean): Promise<void> {
    for (const entry of [...pending.values()]) {
      if (!filter(entry.approval) || entry.claimed) continue;
      const evaluation = await evaluate(entry.request, { canonicalPaths: entry.canonicalPaths, home: entry.home });
      const subjects = evaluation.verdicts.map((verdict) => verdict.subject.label);
      const by = `rule: ${reasonOf(evaluation)}`;
      if (evaluation.decision.type === 'allow') {
        const gate = await allowed(entry.request, { home: entry.home, canonicalPaths: entry.canonicalPaths });
        if (!entry.claimed) settle(entry, { outcome: 'approved', by, gate }, subjects);
      } else if (evaluation.decision.type === 'deny' && !entry.claimed) {
        const message = refusal(entry.request, evaluation);
        settle(
          entry,
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
    if ([...pending.values()].some((entry) => entry.approval.workerId === workerId)) return;
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

  async function check(request: GateRequest): Promise<GateOutcome> {
    const given = permissionPathArguments(request.tool, request.args);
    const failure = audit.failure();
    if (failure !== undefined) {
      return {
        type: 'deny',
        message: `The call was not run: the approval audit log cannot be written (${failure.message}).`,
        errorKind: 'permission_denied',
      };
    }
    if (isAborted(request.signal)) {
      return deny(request, { message: CANCELLED_MESSAGE, errorKind: 'cancelled', subjects: given });
    }
    const resolved = await resolvePaths(request);
    if (!resolved.ok)
      return deny(request, { message: resolved.message, errorKind: resolved.errorKind, subjects: given });
    const guarded = protectedPath(request, resolved.paths);
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
    const context = { canonicalPaths: resolved.paths, home };
    const evaluation = await evaluate(request, context);
    const subjects = evaluation.verdicts.map((verdict) => verdict.subject.label);
    const { decision } = evaluation;
    if (decision.type === 'allow') {
      record(request, { subjects, decision: 'allow', by: `rule: ${describeRule(decision.rule)}` });
      return await allowed(request, context);
    }
    if (decision.type === 'deny') {
      record(request, { subjects, decision: 'deny', by: `rule: ${describeRule(decision.rule)}` });
      return { type: 'deny', message: refusal(request, evaluation), errorKind: 'permission_denied' };
    }
    // The rules were read asynchronously: the turn may have been aborted meanwhile.
    if (isAborted(request.signal)) {
      return deny(request, { message: CANCELLED_MESSAGE, errorKind: 'cancelled', subjects });
    }
    // Nobody should be asked about a call that cannot run.
    if (registry.get(request.workerId)?.state !== 'online') {
      return deny(request, {
        message: `The call was not run: worker ${request.workerId} is offline.`,
        errorKind: 'worker_offline',
        subjects,
      });
    }

    const shared =
      request.shareKey === undefined
        ? undefined
        : [...pending.values()].find(
            (entry) => entry.approval.workerId === request.workerId && entry.request.shareKey === request.shareKey,
          );
    if (shared !== undefined) {
      logger.info(
        { approvalId: shared.approval.approvalId, tool: request.tool },
        'approval request joined the one waiting',
      );
      return new Promise<GateOutcome>((resolvePromise) => shared.joined.push(resolvePromise));
    }

    const approvalId = `${request.sessionId}:${randomBytes(6).toString('hex')}`;
    const approval: Approval = {
      approvalId,
      kind: request.kind ?? 'tool_call',
      sessionId: request.sessionId,
      workerId: request.workerId,
      toolCallId: request.toolCallId,
      tool: request.tool,
      args: request.args,
      reason: reasonOf(evaluation),
      subjects: toSubjectInfo(evaluation),
      alwaysPatterns: evaluation.alwaysPatterns,
      requestedAt: new Date().toISOString(),
    };
    return new Promise<GateOutcome>((resolvePromise) => {
      const onAbort = () =>
        interrupt(entry, { outcome: 'cancelled', by: 'server', reason: 'the turn was aborted', gate: CANCELLED });
      const entry: PendingApproval = {
        approval,
        request,
        canonicalPaths: resolved.paths,
        home,
        claimed: false,
        interrupted: undefined,
        joined: [],
        finish: (outcome) => {
          request.signal?.removeEventListener('abort', onAbort);
          resolvePromise(outcome);
          for (const join of entry.joined) join(outcome);
        },
      };
      pending.set(approvalId, entry);
      watchRules(request.workerId);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      logger.info({ approvalId, sessionId: request.sessionId, tool: request.tool }, 'approval requested');
      emit({ type: 'approval.requested', approval });
    });
  }

  /**
   * An allow, with what the worker must check when it runs the call: where each path led when it
   * was judged (a link swapped while the call waited for approval is refused), and for grep the
   * read_file rules to apply to every file it searches.
   */
  async function allowed(
    request: Pick<GateRequest, 'tool' | 'args' | 'workerId' | 'agent'>,
    context: { home: string | undefined; canonicalPaths: ReadonlyMap<string, readonly string[]> },
  ): Promise<GateOutcome> {
    const approvedPaths: Record<string, string> = {};
    // Only a file tool's own path is pinned; a shell line's files are judged, not pinned.
    for (const given of permissionPathArguments(request.tool, request.args)) {
      const absolute = context.canonicalPaths.get(given)?.find((form) => isAbsolute(form));
      if (absolute !== undefined) approvedPaths[given] = absolute;
    }
    const withPaths = Object.keys(approvedPaths).length === 0 ? {} : { approvedPaths };
    if (request.tool !== 'grep') return { type: 'allow', ...withPaths };
    const { rules } = await store.load(request.workerId);
    return {
      type: 'allow',
      ...withPaths,
      readRules: toReadRules({ rules: [...(request.agent?.rules ?? []), ...rules], home: context.home }),
    };
  }

  function find(sessionId: string, approvalId: string): PendingApproval | undefined {
    const entry = pending.get(approvalId);
    // The session must match: an answer for one session's prompt can't be replayed into another.
    if (entry === undefined || entry.approval.sessionId !== sessionId || entry.claimed) return undefined;
    return entry;
  }

  async function approve({
    sessionId,
    approvalId,
    scope,
    by,
  }: {
    sessionId: string;
    approvalId: string;
    scope: ApprovalScope;
    by: Answerer;
  }): Promise<{ applied: boolean }> {
    const entry = find(sessionId, approvalId);
    if (entry === undefined) return { applied: false };
    const { approval } = entry;
    if (scope !== 'once' && approval.alwaysPatterns === null) {
      throw new MolfError(
        'invalid_input',
        `"${scope}" is not offered for this call (no pattern could describe it safely): approve it once instead`,
        { field: 'scope' },
      );
    }
    entry.claimed = true;
    let answered: Resolution = {
      outcome: 'approved',
      by: `client:${by.credentialId}`,
      scope,
      connectionId: by.connectionId,
      gate: { type: 'allow' },
    };
    let current: ToolCallEvaluation;
    try {
      // Rules may have changed while the prompt waited: a deny added since wins over the answer.
      current = await evaluate(entry.request, { canonicalPaths: entry.canonicalPaths, home: entry.home });
      answered = {
        ...answered,
        gate: await allowed(entry.request, { home: entry.home, canonicalPaths: entry.canonicalPaths }),
      };
      if (current.decision.type !== 'deny' && scope === 'always') {
        const { problem } = await store.load(approval.workerId);
        if (problem !== undefined) {
          throw new MolfError(
            'permissions_invalid',
            `"always" cannot be saved while the permissions file is broken (line ${problem.line}, column ${problem.column}: ${problem.message}); approve for the session instead, or fix the file`,
          );
        }
        const added = await store.appendAllow(approval.workerId, {
          tool: approval.tool,
          patterns: approval.alwaysPatterns ?? [],
          accepts: (rules) =>
            engine.evaluate({
              tool: approval.tool,
              args: approval.args,
              layers: { file: rules },
              home: entry.home,
              ...pathLookups(entry.canonicalPaths),
            }).decision.type === 'allow',
        });
        audit.append({
          workerId: approval.workerId,
          sessionId,
          approvalId,
          tool: approval.tool,
          subjects: added,
          decision: 'rules_changed',
          by: `client:${by.credentialId}`,
          connectionId: by.connectionId,
          scope,
        });
        logger.info(
          { workerId: approval.workerId, tool: approval.tool, added },
          'allow rules saved to the permissions file',
        );
      }
    } catch (error) {
      entry.claimed = false;
      if (entry.interrupted !== undefined) settle(entry, entry.interrupted, undefined);
      throw error;
    }
    entry.claimed = false;
    if (current.decision.type === 'deny') {
      settle(
        entry,
        {
          outcome: 'denied',
          by: `rule: ${reasonOf(current)}`,
          reason: 'a deny rule added while the call waited now covers it',
          gate: { type: 'deny', message: refusal(entry.request, current), errorKind: 'permission_denied' },
        },
        undefined,
      );
      return { applied: false };
    }
    if (scope !== 'once') {
      const rules = sessionRules.get(sessionId) ?? [];
      for (const pattern of approval.alwaysPatterns ?? []) {
        rules.push({ tool: approval.tool, pattern, action: 'allow', source: { layer: 'session' } });
      }
      sessionRules.set(sessionId, rules);
    }
    // An abort or a worker going offline during the save came after the answer: the answer stands,
    // and the call itself is then cancelled or fails at dispatch.
    settle(entry, answered, undefined);
    // Other waiting calls the new rules allow go ahead: the session's, or with "always" the worker's.
    if (scope === 'session') await rejudge((waiting) => waiting.sessionId === sessionId);
    if (scope === 'always') await rulesChanged(approval.workerId);
    return { applied: true };
  }

  return {
    check,

    async explain({ workerId, tool, args }) {
      const resolved = await resolvePaths({ workerId, tool, args });
      const canonicalPaths = resolved.ok ? resolved.paths : new Map<string, readonly string[]>();
      const evaluation = await evaluate(
        { workerId, tool, args, sessionId: '' },
        { canonicalPaths, home: registry.registration(workerId)?.home },
      );
      const guarded = protectedPath({ tool, args }, canonicalPaths);
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
      };
    },

    approve,

    deny({ sessionId, approvalId, feedback, by }) {
      const entry = find(sessionId, approvalId);
      if (entry === undefined) return { applied: false };
      const trimmed = feedback?.trim();
      const what =
        entry.approval.kind === 'mcp_server' ? 'starting this MCP server' : `this ${entry.approval.tool} call`;
      const message =
        trimmed === undefined || trimmed === ''
          ? `The user denied ${what}. Do not retry it; ask the user how to proceed.`
          : `The user denied ${what} with this feedback: ${trimmed}`;
      settle(
        entry,
        {
          outcome: 'denied',
          by: `client:${by.credentialId}`,
          connectionId: by.connectionId,
          ...(trimmed === undefined || trimmed === '' ? {} : { reason: trimmed }),
          gate: { type: 'deny', message, errorKind: 'permission_denied' },
        },
        undefined,
      );
      return { applied: true };
    },

    pending(filter = {}) {
      return [...pending.values()]
        .filter(
          (entry) =>
            (filter.sessionId === undefined || entry.approval.sessionId === filter.sessionId) &&
            (filter.workerId === undefined || entry.approval.workerId === filter.workerId),
        )
        .map((entry) => entry.approval);
    },

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
        by: `client:${by.credentialId}`,
        connectionId: by.connectionId,
      });
      rulesChanged(workerId).catch((error: unknown) => {
        logger.error({ err: error, workerId }, 'judging the waiting approvals again failed');
      });
    },

    rulesChanged,

    withdraw({ workerId, shareKey, reason }) {
      const entry = [...pending.values()].find(
        (candidate) => candidate.approval.workerId === workerId && candidate.request.shareKey === shareKey,
      );
      if (entry === undefined) return { withdrawn: false };
      interrupt(entry, { outcome: 'cancelled', by: 'server', reason, gate: CANCELLED });
      return { withdrawn: true };
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    workerOffline(workerId) {
      for (const entry of [...pending.values()]) {
        if (entry.approval.workerId !== workerId) continue;
        const reason = `worker ${workerId} went offline`;
        interrupt(entry, {
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
      sessionRules.delete(sessionId);
    },

    close() {
      for (const stop of watchers.values()) stop();
      watchers.clear();
      for (const entry of [...pending.values()]) {
        settle(
          entry,
          {
            outcome: 'cancelled',
            by: 'server',
            reason: 'the server is shutting down',
            gate: {
              type: 'deny',
              message: 'The call was not run: the server is shutting down.',
              errorKind: 'cancelled',
            },
          },
          undefined,
        );
      }
    },
  };
}
