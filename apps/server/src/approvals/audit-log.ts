import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';

/** One decision of the approval gate, or one change of a worker's rules, as kept on disk. */
export type AuditRecord = {
  workerId: string;
  /** What the rules were matched against (commands, paths, names), each cut to 500 characters. */
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
  scope?: 'once' | 'session' | 'always';
  approvalId?: string;
};

export type AuditLog = {
  append(record: AuditRecord): void;
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
    },
    failure: () => failed,
    close: () => new Promise<void>((resolvePromise) => stream.end(() => resolvePromise())),
  };
}
