import type { Approval, ApprovalEvent } from '@molf/protocol';
import type { Answerer, ApprovalGate, ApproveOptions } from '../approvals/approval-gate.ts';

export type DenyOptions = { sessionId: string; approvalId: string; feedback?: string | undefined; by: Answerer };

/**
 * Where people's answers to approvals go: the gate of this server, or, with several instances on
 * one database, the gate of the instance whose turn asked (see `shared-approval-answers.ts`).
 */
export type ApprovalAnswers = {
  approve(options: ApproveOptions): Promise<{ applied: boolean }>;
  deny(options: DenyOptions): Promise<{ applied: boolean }>;
  /** The approvals waiting, this instance's and the others'. */
  pending(filter: { sessionId?: string | undefined; workerId?: string | undefined }): Promise<Approval[]>;
  /** Approvals asked and settled, on this instance and the others; and this gate's file problems. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
  close(): Promise<void>;
};

/** One server: answers go to its own gate. */
export function createLocalApprovalAnswers(gate: ApprovalGate): ApprovalAnswers {
  return {
    approve: (options) => gate.approve(options),
    deny: async (options) => gate.deny(options),
    pending: async (filter) => gate.pending(filter),
    subscribe: (listener) => gate.subscribe(listener),
    close: async () => {},
  };
}
