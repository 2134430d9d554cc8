import { createWriteStream, mkdirSync, statSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import type { ApprovalScope } from '@molf/protocol';
import { createGrantOrigins, type GrantOrigin } from './grant-origins.ts';

/** A rule an "always" answer saved, as its `rules_changed` record names it. */
export type AuditGrant = { grantId: string; pattern: string; expiresAt?: string };

/** One decision of the approval gate, or one change of a worker's rules, as kept on disk. */
export type AuditRecord = {
  workerId: string;
  /**
   * What the rules were matched against (commands, paths, names), each cut to 500 characters: for
   * an answer and for the `rules_changed` record of an "always" answer, the call's; for an edit of
   * the file, its path.
   */
  subjects: string[];
  decision: 'allow' | 'deny' | 'approved' | 'denied' | 'cancelled' | 'rules_changed' | 'sandbox_refused';
  /**
   * `rule: …` with the deciding rule, `client:<credential id>` for a person's answer or a rules
   * edit, `link:<nonce prefix>` for an answer by a one-time link of a notification,
   * `server: <reason>`, or `sandbox: <what>` for what a worker's sandbox refused a command that the
   * gate had let through.
   */
  by: string;
  sessionId?: string;
  toolCallId?: string;
  tool?: string;
  /** The client connection that answered or edited. */
  connectionId?: string;
  /** The client program of that connection (`molf-cli/0.1.0`), as it named itself. */
  client?: string;
  scope?: ApprovalScope;
  approvalId?: string;
  /**
   * The allow patterns a "session" or "always" answer added (on `approved`), or the patterns an
   * answer saved to the file or a revoke removed (on `rules_changed`).
   */
  rules?: string[];
  /** The patterns the approval offered, when the person edited them into `rules`. */
  offeredPatterns?: string[];
  /**
   * Whether `rules` alone allow the approved call: false when the person edited them so that
   * they do not (the call still ran once: the person approved it).
   */
  coversCall?: boolean;
  /** The grants an "always" answer saved (on `rules_changed`): one per rule added to the file. */
  grants?: AuditGrant[];
  /** The grant a revoke removed (on `rules_changed`). */
  grantId?: string;
};

export type AuditLog = {
  append(record: AuditRecord): void;
  /**
   * How a grant was given: the `rules_changed` record of the "always" answer that saved it; undefined
   * when the log has none (a grant id written by hand, or one older than the index keeps).
   */
  grantOrigin(grantId: string): Promise<GrantOrigin | undefined>;
  /** Set once a write failed: from then on the gate refuses every call rather than act unrecorded. */
  failure(): Error | undefined;
  close(): Promise<void>;
  path: string;
};

const MAX_SUBJECT_CHARS = 500;

/**
 * An append-only JSON-lines file `{dataDir}/audit/approvals.jsonl` (0600): one line per decision
 * with its time. Arguments are not written in full (they may hold file contents); subjects are.
 */
export function openAuditLog(options: { dataDir: string; logger: Logger }): AuditLog {
  const directory = join(options.dataDir, 'audit');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const path = join(directory, 'approvals.jsonl');
  const sizeAtOpen = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  const origins = createGrantOrigins({ path, sizeAtOpen, logger: options.logger });
  const stream: WriteStream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  let failed: Error | undefined;
  stream.on('error', (error) => {
    failed ??= error;
    options.logger.error(
      { err: error, path },
      'cannot write the approval audit log: every tool call is refused until it can',
    );
  });
  return {
    path,
    append(record) {
      if (failed !== undefined) return;
      const line = {
        time: new Date().toISOString(),
        ...record,
        subjects: record.subjects.map((subject) =>
          subject.length > MAX_SUBJECT_CHARS ? `${subject.slice(0, MAX_SUBJECT_CHARS)}…` : subject,
        ),
      };
      stream.write(`${JSON.stringify(line)}\n`);
      origins.note(line);
    },
    grantOrigin: (grantId) => origins.get(grantId),
    failure: () => failed,
    close: () => new Promise<void>((resolvePromise) => stream.end(() => resolvePromise())),
  };
}
