import { randomBytes } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  describeRule,
  type PermissionEngine,
  type PermissionRule,
  permissionPathArguments,
  type ToolCallEvaluation,
} from '@molf/permissions';
import {
  type Approval,
  type ApprovalEvent,
  type ApprovalScope,
  MolfError,
  type PermissionExplanation,
  type PermissionsProblem,
  RESOLVE_PATHS_JOB,
  ResolvedPathsSchema,
  type SubjectVerdictInfo,
  type ToolErrorKind,
  type WorkerId,
} from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { AuditLog } from './audit-log.ts';
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
};

export type GateOutcome =
  | { type: 'allow' }
  | {
      type: 'deny';
      message: string;
      errorKind: Extract<ToolErrorKind, 'permission_denied' | 'cancelled' | 'worker_offline'>;
    };

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
  /** Live events; the listener must not throw. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
  /** A worker went offline: its pending approvals are denied with a reason. */
  workerOffline(workerId: WorkerId): void;
  /** Forgets a session's "session" answers (session deleted). */
  clearSession(sessionId: string): void;
  /** Cancels every pending approval (server shutdown). */
  close(): void;
};

type PendingApproval = {
  approval: Approval;
  request: GateRequest;
  canonicalPaths: ReadonlyMap<string, readonly string[]>;
  home: string | undefined;
  /** Set once the first answer is being applied; later answers see `applied: false`. */
  answered: boolean;
  finish(outcome: GateOutcome): void;
};

/** How long the gate waits for the worker to say where paths lead. */
const RESOLVE_PATHS_TIMEOUT_MS = 10_000;

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

export function createApprovalGate(options: {
  engine: PermissionEngine;
  store: PermissionsStore;
  registry: WorkerRegistry;
  dispatcher: JobDispatcher;
  audit: AuditLog;
  logger: Logger;
}): ApprovalGate {
  const { engine, store, registry, dispatcher, audit, logger } = options;
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const pending = new Map<string, PendingApproval>();
  const sessionRules = new Map<string, PermissionRule[]>();
  const problems = new Map<WorkerId, PermissionsProblem>();

  function emit(event: ApprovalEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.error({ err: error }, 'approval event listener failed');
      }
    }
  }

  async function resolvePaths(
    request: Pick<GateRequest, 'workerId' | 'tool' | 'args' | 'signal'>,
  ): Promise<
    | { ok: true; paths: Map<string, readonly string[]> }
    | { ok: false; message: string; errorKind: 'worker_offline' | 'permission_denied' }
  > {
    const given = permissionPathArguments(request.tool, request.args);
    if (given.length === 0) return { ok: true, paths: new Map() };
    const result = await dispatcher.dispatch({
      workerId: request.workerId,
      toolName: RESOLVE_PATHS_JOB,
      args: { paths: given },
      timeoutMs: RESOLVE_PATHS_TIMEOUT_MS,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    if (result.error !== undefined) {
      const offline = ['worker_offline', 'worker_not_found', 'worker_restarted'].includes(
        String(result.meta?.errorKind),
      );
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
    return { ok: true, paths: new Map(parsed.data.paths.map((entry) => [entry.given, entry.forms])) };
  }

  async function evaluate(
    request: Pick<GateRequest, 'workerId' | 'tool' | 'args' | 'agent' | 'sessionId'>,
    context: { canonicalPaths: ReadonlyMap<string, readonly string[]>; home: string | undefined },
  ): Promise<ToolCallEvaluation> {
    const { rules, problem } = await store.load(request.workerId);
    if (problem === undefined) problems.delete(request.workerId);
    else problems.set(request.workerId, problem);
    return engine.evaluate({
      tool: request.tool,
      args: request.args,
      layers: {
        ...(request.agent === undefined ? {} : { agent: request.agent.rules }),
        file: rules,
        session: sessionRules.get(request.sessionId) ?? [],
      },
      home: context.home,
      canonicalPaths: (given) => context.canonicalPaths.get(given),
    });
  }

  function record(
    request: GateRequest,
    evaluation: ToolCallEvaluation,
    decision: {
      decision: 'allow' | 'deny' | 'approved' | 'denied' | 'cancelled';
      by: string;
      scope?: ApprovalScope;
      approvalId?: string;
    },
  ): void {
    audit.append({
      sessionId: request.sessionId,
      workerId: request.workerId,
      toolCallId: request.toolCallId,
      tool: request.tool,
      subjects: evaluation.verdicts.map((verdict) => verdict.subject.label),
      ...decision,
    });
  }

  function settle(
    entry: PendingApproval,
    result: {
      outcome: 'approved' | 'denied' | 'cancelled';
      by: string;
      scope?: ApprovalScope;
      reason?: string;
      gate: GateOutcome;
    },
    evaluation: ToolCallEvaluation | undefined,
  ): void {
    const { approval } = entry;
    if (!pending.delete(approval.approvalId)) return;
    entry.answered = true;
    audit.append({
      sessionId: approval.sessionId,
      workerId: approval.workerId,
      toolCallId: approval.toolCallId,
      tool: approval.tool,
      subjects:
        evaluation?.verdicts.map((verdict) => verdict.subject.label) ??
        approval.subjects.map((subject) => subject.label),
      decision: result.outcome,
      by: result.by,
      approvalId: approval.approvalId,
      ...(result.scope === undefined ? {} : { scope: result.scope }),
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

  /** After a "session" or "always" answer, other waiting calls of the session may now be allowed. */
  async function cascade(sessionId: string): Promise<void> {
    for (const entry of [...pending.values()]) {
      if (entry.approval.sessionId !== sessionId || entry.answered) continue;
      const evaluation = await evaluate(entry.request, { canonicalPaths: entry.canonicalPaths, home: entry.home });
      if (evaluation.decision.type === 'allow' && !entry.answered) {
        settle(
          entry,
          { outcome: 'approved', by: `rule: ${reasonOf(evaluation)}`, gate: { type: 'allow' } },
          evaluation,
        );
      }
    }
  }

  async function check(request: GateRequest): Promise<GateOutcome> {
    const resolved = await resolvePaths(request);
    if (!resolved.ok) {
      audit.append({
        sessionId: request.sessionId,
        workerId: request.workerId,
        toolCallId: request.toolCallId,
        tool: request.tool,
        subjects: permissionPathArguments(request.tool, request.args),
        decision: 'deny',
        by: `server: ${resolved.message}`,
      });
      return { type: 'deny', message: resolved.message, errorKind: resolved.errorKind };
    }
    const home = registry.registration(request.workerId)?.home;
    const context = { canonicalPaths: resolved.paths, home };
    const evaluation = await evaluate(request, context);
    const { decision } = evaluation;
    if (decision.type === 'allow') {
      record(request, evaluation, { decision: 'allow', by: `rule: ${describeRule(decision.rule)}` });
      return { type: 'allow' };
    }
    if (decision.type === 'deny') {
      record(request, evaluation, { decision: 'deny', by: `rule: ${describeRule(decision.rule)}` });
      return { type: 'deny', message: refusal(request, evaluation), errorKind: 'permission_denied' };
    }
    if (request.signal?.aborted === true) {
      return { type: 'deny', message: 'The tool call was cancelled before it was approved.', errorKind: 'cancelled' };
    }

    const approvalId = `${request.sessionId}:${randomBytes(6).toString('hex')}`;
    const approval: Approval = {
      approvalId,
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
        settle(
          entry,
          {
            outcome: 'cancelled',
            by: 'server',
            reason: 'the turn was aborted',
            gate: {
              type: 'deny',
              message: 'The tool call was cancelled before it was approved.',
              errorKind: 'cancelled',
            },
          },
          evaluation,
        );
      const entry: PendingApproval = {
        approval,
        request,
        canonicalPaths: resolved.paths,
        home,
        answered: false,
        finish: (outcome) => {
          request.signal?.removeEventListener('abort', onAbort);
          resolvePromise(outcome);
        },
      };
      pending.set(approvalId, entry);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      logger.info({ approvalId, sessionId: request.sessionId, tool: request.tool }, 'approval requested');
      emit({ type: 'approval.requested', approval });
    });
  }

  function find(sessionId: string, approvalId: string): PendingApproval | undefined {
    const entry = pending.get(approvalId);
    // The session must match: an answer for one session's prompt can't be replayed into another.
    if (entry === undefined || entry.approval.sessionId !== sessionId || entry.answered) return undefined;
    return entry;
  }

  return {
    check,

    async explain({ workerId, tool, args }) {
      const resolved = await resolvePaths({ workerId, tool, args });
      const evaluation = await evaluate(
        { workerId, tool, args, sessionId: '' },
        { canonicalPaths: resolved.ok ? resolved.paths : new Map(), home: registry.registration(workerId)?.home },
      );
      return {
        decision: evaluation.decision.type,
        reason: reasonOf(evaluation),
        subjects: toSubjectInfo(evaluation),
        problems: [
          ...evaluation.problems,
          ...(resolved.ok ? [] : [`paths not resolved on the worker: ${resolved.message}`]),
        ],
        alwaysPatterns: evaluation.alwaysPatterns,
      };
    },

    async approve({ sessionId, approvalId, scope, by }) {
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
      entry.answered = true;
      try {
        if (scope === 'always') {
          const added = await store.appendAllow(approval.workerId, {
            tool: approval.tool,
            patterns: approval.alwaysPatterns ?? [],
          });
          logger.info(
            { workerId: approval.workerId, tool: approval.tool, added },
            'allow rules saved to the permissions file',
          );
        }
      } catch (error) {
        entry.answered = false;
        throw error;
      }
      if (scope !== 'once') {
        const rules = sessionRules.get(sessionId) ?? [];
        for (const pattern of approval.alwaysPatterns ?? []) {
          rules.push({ tool: approval.tool, pattern, action: 'allow', source: { layer: 'session' } });
        }
        sessionRules.set(sessionId, rules);
      }
      // The turn may have been aborted while the rule was being saved.
      if (!pending.has(approvalId)) return { applied: false };
      entry.answered = false;
      settle(
        entry,
        { outcome: 'approved', by: `client:${by.credentialId}`, scope, gate: { type: 'allow' } },
        undefined,
      );
      if (scope !== 'once') await cascade(sessionId);
      return { applied: true };
    },

    deny({ sessionId, approvalId, feedback, by }) {
      const entry = find(sessionId, approvalId);
      if (entry === undefined) return { applied: false };
      const trimmed = feedback?.trim();
      const message =
        trimmed === undefined || trimmed === ''
          ? `The user denied this ${entry.approval.tool} call. Do not retry it; ask the user how to proceed.`
          : `The user denied this ${entry.approval.tool} call with this feedback: ${trimmed}`;
      settle(
        entry,
        {
          outcome: 'denied',
          by: `client:${by.credentialId}`,
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

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    workerOffline(workerId) {
      for (const entry of [...pending.values()]) {
        if (entry.approval.workerId !== workerId) continue;
        const reason = `worker ${workerId} went offline`;
        settle(
          entry,
          {
            outcome: 'denied',
            by: 'server',
            reason,
            gate: {
              type: 'deny',
              message: `The call was not run: ${reason} while it waited for approval.`,
              errorKind: 'worker_offline',
            },
          },
          undefined,
        );
      }
    },

    clearSession(sessionId) {
      sessionRules.delete(sessionId);
    },

    close() {
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
