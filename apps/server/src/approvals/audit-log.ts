import type { ApprovalScope } from '@molf/protocol';
import type { GrantOrigin } from './grant-origins.ts';

/** A rule an "always" answer saved, as its `rules_changed` record names it. */
export type AuditGrant = { grantId: string; pattern: string; expiresAt?: string };

/** One decision of the approval gate, or one change of a worker's rules, as the audit log keeps it. */
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

/** A record as kept: with the time it was appended (ISO 8601) and its subjects cut to length. */
export type AuditEntry = AuditRecord & { time: string };

export type AuditLog = {
  /** Keeps the record, with the time now; never throws (a failed write shows in `failure`). */
  append(record: AuditRecord): void;
  /**
   * How a grant was given: the `rules_changed` record of the "always" answer that saved it; undefined
   * when the log has none (a grant id written by hand, or one older than the index keeps).
   */
  grantOrigin(grantId: string): Promise<GrantOrigin | undefined>;
  /**
   * The newest `limit` records (default 100), of one worker or all, oldest first: what every
   * server sharing the log appended, this one's included.
   */
  read(options?: { workerId?: string; limit?: number }): Promise<AuditEntry[]>;
  /**
   * Set while a record cannot be written: from then on the gate refuses every call rather than
   * act unrecorded (the file log stays failed; the database's clears once its records are written).
   */
  failure(): Error | undefined;
  /**
   * Resolves once every record appended so far is stored (on disk, or in the database), or the log
   * failed (see `failure`): the gate lets a call run only once its record can outlive a crash.
   */
  stored(): Promise<void>;
  /** Writes what is pending, then stops. */
  close(): Promise<void>;
  /** Where the log is, for people: the file's path, or the table in the database. */
  where: string;
};

const MAX_SUBJECT_CHARS = 500;

/** How many records `read` returns by default. */
export const DEFAULT_AUDIT_READ_LIMIT = 100;

/**
 * The record as the log keeps it: its time first, and each subject cut to 500 characters.
 * Arguments are never kept in full (they may hold file contents); subjects are.
 */
export function toAuditEntry(record: AuditRecord, at: Date): AuditEntry {
  return {
    time: at.toISOString(),
    ...record,
    subjects: record.subjects.map((subject) =>
      subject.length > MAX_SUBJECT_CHARS ? `${subject.slice(0, MAX_SUBJECT_CHARS)}…` : subject,
    ),
  };
}
