import { randomBytes } from 'node:crypto';
import type { Logger } from '@molf/logging';
import type { Approval } from '@molf/protocol';
import type { ApprovalAnswers } from '../cluster/approval-answers.ts';
import { type LinkClaims, type LinkDecision, safeParseLinkToken, toLinkToken } from './approval-link-token.ts';

/** The path under the server's base URL where links answer; the token follows it. */
export const APPROVAL_LINKS_PATH = 'approval-links/';

/** One notification's pair of links. */
export type ApprovalLinkPair = {
  approve: string;
  deny: string;
  /** ISO time after which neither answers. */
  expiresAt: string;
  /** How the audit trail will name whoever uses them: `link:<first 8 characters of the nonce>`. */
  by: { approve: string; deny: string };
};

/** What a link says when it is opened (GET): it does not answer. */
export type LinkInspection =
  | { type: 'pending'; decision: LinkDecision; approval: Approval }
  | { type: 'invalid' }
  | { type: 'expired' }
  | { type: 'used' }
  | { type: 'answered' };

/** What using a link (POST) did. */
export type LinkAnswer =
  | { type: 'applied'; decision: LinkDecision; approval: Pick<Approval, 'approvalId' | 'tool'> }
  | { type: 'invalid' }
  | { type: 'expired' }
  | { type: 'used' }
  | { type: 'answered' };

export type ApprovalLinks = {
  /** Signs a fresh approve/deny pair for an approval, under `baseUrl` (its path kept). */
  create(options: { approval: Approval; baseUrl: string }): ApprovalLinkPair;
  inspect(token: string): Promise<LinkInspection>;
  /** Answers the approval as the link says, once; the first answer wins as for any client. */
  answer(token: string): Promise<LinkAnswer>;
};

/** How the audit trail and `approval.resolved` name a link's answer. */
export function toLinkAnswerer(nonce: string): string {
  return `link:${nonce.slice(0, 8)}`;
}

/**
 * Signed, expiring, single-use approve/deny links. A used link's nonce is remembered in memory
 * until the link expires (so the memory is bounded by the links used within one TTL). A restart
 * forgets them, but it also ends every pending approval, so a link used before it can only
 * answer 410 after it.
 */
export function createApprovalLinks(options: {
  key: Buffer;
  /** Where answers go: this server's gate, or the one of the server whose turn asked. */
  answers: ApprovalAnswers;
  ttlMs: number;
  logger: Logger;
  /** Default `Date.now`. */
  now?: () => number;
}): ApprovalLinks {
  const { key, answers, ttlMs, logger } = options;
  const now = options.now ?? Date.now;
  /** Nonce → when its link expires. */
  const used = new Map<string, number>();

  function forgetExpired(at: number): void {
    for (const [nonce, expiresAt] of used) if (expiresAt < at) used.delete(nonce);
  }

  function toUrl(baseUrl: string, claims: LinkClaims): string {
    const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
    return new URL(`${APPROVAL_LINKS_PATH}${toLinkToken({ key, claims })}`, base).href;
  }

  /** Verified claims still in force, or why not. */
  function check(token: string): { type: 'valid'; claims: LinkClaims } | { type: 'invalid' | 'expired' | 'used' } {
    const parsed = safeParseLinkToken({ key, token });
    if (!parsed.ok) return { type: 'invalid' };
    const claims = parsed.value;
    if (now() > claims.expiresAt) return { type: 'expired' };
    if (used.has(claims.nonce)) return { type: 'used' };
    return { type: 'valid', claims };
  }

  async function waiting(claims: LinkClaims): Promise<Approval | undefined> {
    const pending = await answers.pending({ sessionId: claims.sessionId });
    return pending.find((approval) => approval.approvalId === claims.approvalId);
  }

  return {
    create({ approval, baseUrl }) {
      const expiresAt = now() + ttlMs;
      const base = { approvalId: approval.approvalId, sessionId: approval.sessionId, expiresAt };
      const approve: LinkClaims = { ...base, decision: 'approve', nonce: randomBytes(16).toString('base64url') };
      const deny: LinkClaims = { ...base, decision: 'deny', nonce: randomBytes(16).toString('base64url') };
      return {
        approve: toUrl(baseUrl, approve),
        deny: toUrl(baseUrl, deny),
        expiresAt: new Date(expiresAt).toISOString(),
        by: { approve: toLinkAnswerer(approve.nonce), deny: toLinkAnswerer(deny.nonce) },
      };
    },

    async inspect(token) {
      const checked = check(token);
      if (checked.type !== 'valid') return checked;
      const approval = await waiting(checked.claims);
      return approval === undefined
        ? { type: 'answered' }
        : { type: 'pending', decision: checked.claims.decision, approval };
    },

    async answer(token) {
      forgetExpired(now());
      const checked = check(token);
      if (checked.type !== 'valid') return checked;
      const { claims } = checked;
      // Used from here on, whatever the gate says: a link answers at most once.
      used.set(claims.nonce, claims.expiresAt);
      const by = { link: toLinkAnswerer(claims.nonce) };
      const request = { sessionId: claims.sessionId, approvalId: claims.approvalId, by };
      const tool = (await waiting(claims))?.tool ?? '';
      let applied: boolean;
      try {
        applied =
          claims.decision === 'approve'
            ? (await answers.approve({ ...request, scope: 'once' })).applied
            : (await answers.deny(request)).applied;
      } catch (error) {
        // Nothing was answered (e.g. the audit log failed): the link may be tried again.
        used.delete(claims.nonce);
        throw error;
      }
      if (!applied) return { type: 'answered' };
      logger.info(
        { approvalId: claims.approvalId, by: by.link, decision: claims.decision },
        'approval answered by link',
      );
      return { type: 'applied', decision: claims.decision, approval: { approvalId: claims.approvalId, tool } };
    },
  };
}
