import type { Logger } from '@molf/logging';
import { type Approval, type ApprovalEvent, MolfError } from '@molf/protocol';
import type { Answerer, ApprovalGate, ApproveOptions } from '../approvals/approval-gate.ts';
import type { Database } from '../database/index.ts';
import type { ApprovalAnswers, DenyOptions } from './approval-answers.ts';

/** Wakes the instance that holds an approval: the payload is `approvalId instanceId`. */
export const ANSWERS_CHANNEL = 'molf_approval_answers';
/** Wakes the instance whose client answered: the payload is `approvalId instanceId`. */
export const OUTCOMES_CHANNEL = 'molf_approval_outcomes';
/**
 * Tells the other instances an approval was asked or settled here: the payload is JSON, either
 * `{ from, requested: approvalId }` (the approval is read from its row) or `{ from, resolved: event }`.
 */
export const APPROVAL_EVENTS_CHANNEL = 'molf_approval_events';
/** NOTIFY refuses payloads of 8,000 bytes and more: a longer reason is left out of the announcement. */
const MAX_PAYLOAD = 7_000;
/** How many times (100 ms apart) an answer looks for an approval whose row is not written yet. */
const SHARE_RETRIES = 10;
/** How long an answer waits for the holding instance to apply it. */
const APPLY_DEADLINE_MS = 30_000;

type StoredAnswer =
  | ({ type: 'approve' } & Omit<ApproveOptions, 'by'> & { by: Answerer; from: string })
  | ({ type: 'deny' } & Omit<DenyOptions, 'by'> & { by: Answerer; from: string });
type StoredOutcome = { applied: boolean } | { error: { code: string; message: string } };

/** An instance not seen for this long is gone for good: its waiting approvals' rows are deleted. */
const FORGET_AFTER_MS = 5 * 60_000;

/**
 * Approvals shared by the instances on one database. The instance whose turn asks keeps the waiting
 * approval in its gate and a row of `pending_approvals` (written and removed as its gate opens and
 * settles it). An answer, from a client of any instance, is first written into the row by a
 * conditional update — the first answer wins, whichever instance it reaches — then the holder is
 * woken, applies it through its gate (the same checks, rules and audit as a local answer) and
 * writes back the outcome, which the answering instance returns to its client.
 */
export async function openSharedApprovalAnswers(options: {
  gate: ApprovalGate;
  database: Database;
  instanceId: string;
  logger: Logger;
  /**
   * An instance not seen for this long no longer holds its turns: its waiting approvals are not
   * listed and cannot be answered (the instance that takes a turn over asks again, under a new id).
   * Default 10 s, as the leases. Not seen for `FORGET_AFTER_MS` either, its rows are deleted.
   */
  liveMs?: number;
}): Promise<ApprovalAnswers> {
  const { gate, instanceId, logger } = options;
  const { sql } = options.database;
  const live = `${options.liveMs ?? 10_000} milliseconds`;
  const forgetAfter = `${FORGET_AFTER_MS} milliseconds`;
  /** The approval row `p` is held by this instance, or by one seen within `interval`. */
  const heldBySeen = (interval: string) => sql`
    (p.instance_id = ${instanceId} or exists (
      select 1 from instances i where i.instance_id = p.instance_id and i.seen_at > now() - ${interval}::interval))`;
  /** Answers made here that wait for the holder's outcome, by approval: two may race for one (two tabs). */
  const waiting = new Map<string, Set<(outcome: StoredOutcome) => void>>();
  const listeners = new Set<(event: ApprovalEvent) => void>();
  const emit = (event: ApprovalEvent) => {
    for (const listener of listeners) listener(event);
  };

  function announce(
    message: { requested: string } | { resolved: Extract<ApprovalEvent, { type: 'approval.resolved' }> },
  ) {
    let payload = JSON.stringify({ from: instanceId, ...message });
    if (payload.length > MAX_PAYLOAD && 'resolved' in message) {
      const { reason: _reason, ...short } = message.resolved;
      payload = JSON.stringify({ from: instanceId, resolved: short });
    }
    return sql`select pg_notify(${APPROVAL_EVENTS_CHANNEL}, ${payload})`;
  }

  function share(approval: Approval) {
    return sql`
      insert into pending_approvals (approval_id, session_id, worker_id, instance_id, approval)
      values (${approval.approvalId}, ${approval.sessionId ?? null}, ${approval.workerId}, ${instanceId},
        ${JSON.stringify(approval)})
      on conflict (approval_id) do nothing`;
  }

  const stopMirroring = gate.subscribe((event) => {
    emit(event);
    if (event.type === 'approval.requested') {
      share(event.approval)
        .then(() => announce({ requested: event.approval.approvalId }))
        .catch((error: unknown) =>
          logger.warn({ err: error, approvalId: event.approval.approvalId }, 'cannot share a waiting approval'),
        );
    } else if (event.type === 'approval.resolved') {
      sql`delete from pending_approvals where approval_id = ${event.approvalId}`
        .then(() => announce({ resolved: event }))
        .catch((error: unknown) =>
          logger.warn({ err: error, approvalId: event.approvalId }, 'cannot remove a settled approval'),
        );
    }
  });

  // The other instances' approvals, as they are asked and settled.
  const eventsListening = await sql.listen(APPROVAL_EVENTS_CHANNEL, (payload) => {
    let message: {
      from?: string;
      requested?: string;
      resolved?: Extract<ApprovalEvent, { type: 'approval.resolved' }>;
    };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (message.from === instanceId || listeners.size === 0) return;
    if (message.resolved !== undefined) {
      emit(message.resolved);
    } else if (message.requested !== undefined) {
      const approvalId = message.requested;
      sql<{ approval: string }[]>`select approval from pending_approvals where approval_id = ${approvalId}`
        .then(([row]) => {
          if (row !== undefined) emit({ type: 'approval.requested', approval: JSON.parse(row.approval) as Approval });
        })
        .catch((error: unknown) =>
          logger.warn({ err: error, approvalId }, 'cannot read an approval of another server'),
        );
    }
  });

  async function apply(approvalId: string): Promise<void> {
    const [row] = await sql<{ answer: string | null }[]>`
      select answer from pending_approvals where approval_id = ${approvalId} and instance_id = ${instanceId}`;
    if (row?.answer === undefined || row.answer === null) return;
    const answer = JSON.parse(row.answer) as StoredAnswer;
    let outcome: StoredOutcome;
    try {
      outcome =
        answer.type === 'approve'
          ? await gate.approve({ ...answer, by: answer.by })
          : gate.deny({ ...answer, by: answer.by });
    } catch (error) {
      const code = error instanceof MolfError ? error.code : 'internal';
      outcome = { error: { code, message: (error as Error).message } };
      // A refused answer (a pattern the file would not take…) leaves the approval waiting, as locally.
      await sql`update pending_approvals set answer = null where approval_id = ${approvalId}`;
    }
    await sql`
      with told as (update pending_approvals set outcome = ${JSON.stringify(outcome)} where approval_id = ${approvalId})
      select pg_notify(${OUTCOMES_CHANNEL}, ${`${approvalId} ${answer.from}`})`;
    // Applied answers settle the approval, whose row the mirror removes; a refused one stays.
  }

  const answersListening = await sql.listen(ANSWERS_CHANNEL, (payload) => {
    const [approvalId, holder] = payload.split(' ');
    if (approvalId === undefined || holder !== instanceId) return;
    apply(approvalId).catch((error: unknown) => logger.warn({ err: error, approvalId }, 'cannot apply an answer'));
  });
  const outcomesListening = await sql.listen(OUTCOMES_CHANNEL, (payload) => {
    const [approvalId, answerer] = payload.split(' ');
    if (approvalId === undefined || answerer !== instanceId) return;
    const answers = waiting.get(approvalId);
    if (answers === undefined) return;
    const resolveAll = (outcome: StoredOutcome) => {
      for (const resolveOutcome of answers) resolveOutcome(outcome);
    };
    sql<{ outcome: string | null }[]>`select outcome from pending_approvals where approval_id = ${approvalId}`
      .then(([row]) => resolveAll(row?.outcome ? (JSON.parse(row.outcome) as StoredOutcome) : { applied: true }))
      .catch(() => resolveAll({ applied: true }));
  });

  /**
   * Writes the answer into the approval's row unless one came first, and wakes its holder. A client
   * may see an approval (through the session's events) a moment before its row is written: an
   * answer to an approval not shared yet tries again for a little while.
   */
  async function take(stored: StoredAnswer): Promise<boolean> {
    for (let attempt = 0; ; attempt += 1) {
      const rows = await sql<{ instance_id: string }[]>`
        with taken as (
          update pending_approvals p set answer = ${JSON.stringify(stored)}, outcome = null
          where approval_id = ${stored.approvalId} and session_id is not distinct from ${stored.sessionId}
            and answer is null
            -- A dead holder would never apply it: the answer is refused at once, not left to time out.
            and ${heldBySeen(live)}
          returning instance_id
        )
        select instance_id, pg_notify(${ANSWERS_CHANNEL}, ${stored.approvalId} || ' ' || instance_id) from taken`;
      if (rows.length > 0) return true;
      const [exists] = await sql`select 1 from pending_approvals where approval_id = ${stored.approvalId}`;
      if (exists !== undefined || attempt >= SHARE_RETRIES) return false;
      await new Promise((resolveLater) => setTimeout(resolveLater, 100));
    }
  }

  /**
   * Deletes the waiting approvals of instances not seen for `FORGET_AFTER_MS` (killed: nothing else
   * removes them), and tells every instance's followers they are gone. Not for `liveMs` only: after
   * the database comes back, every instance is unseen until its next renewal, and live ones keep theirs.
   */
  async function forgetTheDeads(): Promise<void> {
    const gone = await sql<{ approval: string }[]>`
      delete from pending_approvals p where not ${heldBySeen(forgetAfter)} returning approval`;
    for (const row of gone) {
      const approval = JSON.parse(row.approval) as Approval;
      if (approval.sessionId === undefined) continue;
      const resolved = {
        type: 'approval.resolved' as const,
        approvalId: approval.approvalId,
        sessionId: approval.sessionId,
        outcome: 'cancelled' as const,
        by: 'server',
        reason: 'the server running its turn stopped; the turn asks again where it resumes',
      };
      emit(resolved);
      await announce({ resolved }).catch(() => undefined);
    }
  }

  /** Writes the answer if none came first, wakes the holder, and waits for what its gate made of it. */
  async function answer(stored: StoredAnswer): Promise<{ applied: boolean }> {
    let resolveOutcome: (outcome: StoredOutcome) => void = () => {};
    const outcome = new Promise<StoredOutcome>((resolve) => {
      resolveOutcome = resolve;
    });
    const answers = waiting.get(stored.approvalId) ?? new Set();
    answers.add(resolveOutcome);
    waiting.set(stored.approvalId, answers);
    try {
      // This instance's own approval may not be shared yet (its row is written as it opens).
      const local = gate.pending({ sessionId: stored.sessionId }).find((item) => item.approvalId === stored.approvalId);
      if (local !== undefined) await share(local);
      if (!(await take(stored))) return { applied: false };
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        outcome,
        new Promise<StoredOutcome>((resolveLate) => {
          timer = setTimeout(
            () =>
              resolveLate({
                error: {
                  code: 'timeout',
                  message: 'the server running this approval’s turn did not apply the answer in time',
                },
              }),
            APPLY_DEADLINE_MS,
          );
        }),
      ]);
      clearTimeout(timer);
      if ('error' in result) {
        throw new MolfError(result.error.code as MolfError['code'], result.error.message);
      }
      return result;
    } finally {
      answers.delete(resolveOutcome);
      if (answers.size === 0 && waiting.get(stored.approvalId) === answers) waiting.delete(stored.approvalId);
    }
  }

  return {
    approve: ({ by, ...rest }) => answer({ type: 'approve', ...rest, by, from: instanceId }),
    deny: ({ by, ...rest }) => answer({ type: 'deny', ...rest, by, from: instanceId }),

    async pending(filter) {
      await forgetTheDeads();
      // Those of instances seen lately: a dead one's would never be applied.
      const rows = await sql<{ approval: string }[]>`
        select approval from pending_approvals p
        where (${filter.sessionId ?? null}::text is null or session_id = ${filter.sessionId ?? null})
          and (${filter.workerId ?? null}::text is null or worker_id = ${filter.workerId ?? null})
          and ${heldBySeen(live)}
        order by approval_id`;
      const all = new Map(
        rows.map((row) => JSON.parse(row.approval) as Approval).map((item) => [item.approvalId, item]),
      );
      // This instance's own, whose rows may not be written yet.
      for (const item of gate.pending(filter)) all.set(item.approvalId, item);
      // Answered ones being applied still wait; in the order they were asked.
      return [...all.values()].sort((a, b) =>
        a.requestedAt < b.requestedAt ? -1 : a.requestedAt > b.requestedAt ? 1 : 0,
      );
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async close() {
      stopMirroring();
      listeners.clear();
      await eventsListening.unlisten().catch(() => undefined);
      for (const answers of waiting.values()) for (const resolveOutcome of answers) resolveOutcome({ applied: false });
      waiting.clear();
      await answersListening.unlisten().catch(() => undefined);
      await outcomesListening.unlisten().catch(() => undefined);
      await sql`delete from pending_approvals where instance_id = ${instanceId}`.catch(() => undefined);
    },
  };
}
