import type { Approval } from '@molf/protocol';
import type { ApprovalLinkPair } from './approval-links.ts';
import type { ApprovalPlace } from './describe-approval.ts';

/** One POST to a notification target. */
export type OutgoingRequest = { url: string; headers: Record<string, string>; body: string };

/** What every target is told about one approval request. */
export type ApprovalNotification = ApprovalPlace & {
  approval: Approval;
  links: Pick<ApprovalLinkPair, 'approve' | 'deny' | 'expiresAt'>;
};
