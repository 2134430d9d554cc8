import type { Logger } from '@molf/logging';
import { isInForce } from '@molf/permissions';
import type { Grant, PermissionsGrants, PermissionsRevokeResult, WorkerId } from '@molf/protocol';
import { type Answerer, toAnsweredBy } from './approval-gate.ts';
import type { AuditLog } from './audit-log.ts';
import type { PermissionsStore } from './permissions-store.ts';

export type GrantService = {
  /**
   * The rules of a worker's file that carry a grant id, in file order, each with what the audit log
   * says about the answer that saved it. A rule deleted by hand is gone from the list; a grant id
   * with no audit record is listed with what its rule says.
   */
  list(workerId: WorkerId): Promise<PermissionsGrants>;
  /**
   * Removes a grant's rule from the worker's file (comments kept, serialized with every other write
   * of the file), records it in the audit log and has the gate judge the worker's waiting approvals
   * again. `grant_not_found` for an id no rule carries.
   */
  revoke(options: { workerId: WorkerId; grantId: string; by: Answerer }): Promise<PermissionsRevokeResult>;
};

export function createGrantService(options: {
  store: PermissionsStore;
  audit: AuditLog;
  logger: Logger;
  /** The clock grants expire by (ms since the epoch): the gate's. */
  now: () => number;
  /** A client credential's label, when the server still has it. */
  credentialLabel: (credentialId: string) => string | undefined;
  /** The worker's rules changed: the gate judges its waiting approvals again. */
  rulesChanged: (workerId: WorkerId) => Promise<void>;
}): GrantService {
  const { store, audit, logger } = options;

  function givenBy(by: string): Grant['givenBy'] {
    if (!by.startsWith('client:')) return undefined;
    const credentialId = by.slice('client:'.length);
    const label = options.credentialLabel(credentialId);
    return label === undefined ? { credentialId } : { credentialId, label };
  }

  return {
    async list(workerId) {
      const { rules, problem } = await store.load(workerId);
      const at = options.now();
      const grants: Grant[] = [];
      for (const rule of rules) {
        if (rule.grant === undefined) continue;
        const origin = await audit.grantOrigin(rule.grant);
        const by = origin === undefined ? undefined : givenBy(origin.by);
        grants.push({
          grantId: rule.grant,
          workerId,
          tool: rule.tool,
          pattern: rule.pattern,
          action: rule.action,
          line: rule.source.layer === 'file' ? rule.source.line : 0,
          ...(rule.expiresAt === undefined ? {} : { expiresAt: new Date(rule.expiresAt).toISOString() }),
          expired: !isInForce(rule, at),
          ...(origin === undefined
            ? {}
            : {
                givenAt: origin.givenAt,
                ...(by === undefined ? {} : { givenBy: by }),
                ...(origin.client === undefined ? {} : { client: origin.client }),
                ...(origin.connectionId === undefined ? {} : { connectionId: origin.connectionId }),
                ...(origin.approvalId === undefined ? {} : { approvalId: origin.approvalId }),
                ...(origin.sessionId === undefined ? {} : { sessionId: origin.sessionId }),
                ...(origin.toolCallId === undefined ? {} : { toolCallId: origin.toolCallId }),
              }),
          subjects: origin?.subjects ?? [],
        });
      }
      return { workerId, path: store.pathOf(workerId), grants, ...(problem === undefined ? {} : { problem }) };
    },

    async revoke({ workerId, grantId, by }) {
      const rule = await store.removeGrant(workerId, grantId);
      audit.append({
        workerId,
        tool: rule.tool,
        subjects: [store.pathOf(workerId)],
        decision: 'rules_changed',
        ...toAnsweredBy(by),
        rules: [rule.pattern],
        grantId,
      });
      logger.info({ workerId, grantId, tool: rule.tool, pattern: rule.pattern }, 'grant revoked');
      // The next call is judged on the file as it is now (the store reads a changed file again);
      // waiting approvals too, though a removed allow makes none of them go ahead.
      await options.rulesChanged(workerId).catch((error: unknown) => {
        logger.error({ err: error, workerId }, 'judging the waiting approvals again failed');
      });
      return { grantId, tool: rule.tool, pattern: rule.pattern };
    },
  };
}
