import type { Logger } from '@molf/logging';
import type { Approval } from '@molf/protocol';
import type { ApprovalGate } from '../approvals/index.ts';
import type { SessionStore } from '../sessions/index.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { ApprovalLinks } from './approval-links.ts';
import { createBackgroundSends } from './background-sends.ts';
import type { ApprovalPlace } from './describe-approval.ts';
import type { NotifyTarget } from './notify-settings.ts';
import type { OutgoingRequest } from './outgoing-request.ts';
import { sendRequest } from './send-request.ts';
import { toNtfyRequest } from './to-ntfy-request.ts';
import { toWebhookRequest } from './to-webhook-request.ts';

export type ApprovalNotifier = {
  /** The base of the links when no `publicUrl` is configured: the server's own http URL, once it listens. */
  useDefaultBaseUrl(url: string): void;
  /** Stops notifying, cancels the requests in flight and waits for them. Idempotent. */
  close(): Promise<void>;
};

/** A target as logs may name it: its type and host, never its path, headers or token. */
function describeTarget(target: NotifyTarget): string {
  return `${target.type} ${new URL(target.url).host}`;
}

/**
 * Sends every approval request (tool calls and MCP server starts alike) to each target, with a
 * fresh pair of one-time links per target. Best effort: sending never delays or fails the gate; each
 * target is sent to on its own, given up after `timeoutMs`, and a failure is logged once with the
 * target's host.
 */
export function startApprovalNotifier(options: {
  gate: ApprovalGate;
  links: ApprovalLinks;
  targets: readonly NotifyTarget[];
  /** The links' base; default: what `useDefaultBaseUrl` is given. */
  publicUrl?: string | undefined;
  sessions: Pick<SessionStore, 'get'>;
  registry: Pick<WorkerRegistry, 'get'>;
  logger: Logger;
  /** How long a target may take to answer. Default 10 s. */
  timeoutMs?: number;
}): ApprovalNotifier {
  const { gate, links, targets, logger } = options;
  let defaultBaseUrl: string | undefined;
  const sends = createBackgroundSends(logger);

  async function placeOf(approval: Approval): Promise<ApprovalPlace> {
    const worker = { workerId: approval.workerId, name: options.registry.get(approval.workerId)?.name };
    // An MCP server start belongs to its worker (session id `worker:<id>`), not to a stored session.
    if (approval.kind === 'mcp_server') return { worker, session: undefined };
    try {
      const session = await options.sessions.get(approval.sessionId);
      return {
        worker,
        session: session === undefined ? undefined : { sessionId: session.sessionId, name: session.name },
      };
    } catch (error) {
      logger.debug({ err: error, sessionId: approval.sessionId }, 'session of an approval not readable');
      return { worker, session: undefined };
    }
  }

  function toRequest(target: NotifyTarget, notification: Parameters<typeof toWebhookRequest>[0]): OutgoingRequest {
    switch (target.type) {
      case 'webhook':
        return toWebhookRequest(notification, target);
      case 'ntfy':
        return toNtfyRequest(notification, target);
    }
  }

  async function notify(approval: Approval): Promise<void> {
    const baseUrl = options.publicUrl ?? defaultBaseUrl;
    if (baseUrl === undefined) {
      logger.warn({ approvalId: approval.approvalId }, 'approval not notified: the server has no URL for links yet');
      return;
    }
    const place = await placeOf(approval);
    await Promise.all(
      targets.map(async (target) => {
        const pair = links.create({ approval, baseUrl });
        const request = toRequest(target, { ...place, approval, links: pair });
        const result = await sendRequest({
          request,
          signal: sends.signal,
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        });
        const fields = { approvalId: approval.approvalId, target: describeTarget(target) };
        if (result.ok) logger.info({ ...fields, links: pair.by }, 'approval notification sent');
        else logger.warn({ ...fields, error: result.error }, 'approval notification failed');
      }),
    );
  }

  const unsubscribe = gate.subscribe((event) => {
    if (event.type !== 'approval.requested' || sends.stopped) return;
    sends.start(
      () => notify(event.approval),
      { approvalId: event.approval.approvalId },
      'approval notification failed',
    );
  });

  return {
    useDefaultBaseUrl(url) {
      defaultBaseUrl = url;
    },
    close() {
      unsubscribe();
      return sends.close();
    },
  };
}
