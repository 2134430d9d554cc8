import { SERVER_VERSION } from '../version.ts';
import type { NotifyTarget } from './notify-settings.ts';
import type { ApprovalNotification, OutgoingRequest } from './outgoing-request.ts';

/** Longest string argument sent in full; a `write_file` content or the like is cut to it. */
export const MAX_WEBHOOK_ARG_CHARS = 2_000;

function capStrings(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.length <= MAX_WEBHOOK_ARG_CHARS
      ? value
      : `${value.slice(0, MAX_WEBHOOK_ARG_CHARS)}… (${value.length - MAX_WEBHOOK_ARG_CHARS} more characters)`;
  }
  if (Array.isArray(value)) return value.map(capStrings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, capStrings(inner)]));
  }
  return value;
}

/**
 * The generic webhook: a JSON POST
 * `{ type: "approval.requested", approval, worker, session, links: { approve, deny, expiresAt } }`,
 * where `approval` is the protocol's `Approval` (string arguments cut to 2,000 characters) and
 * `session` is null for an approval of no session (an MCP server start).
 */
export function toWebhookRequest(
  notification: ApprovalNotification,
  target: Extract<NotifyTarget, { type: 'webhook' }>,
): OutgoingRequest {
  const { approval, worker, session, links } = notification;
  const body = {
    type: 'approval.requested',
    approval: { ...approval, args: capStrings(approval.args) },
    worker,
    session: session ?? null,
    links,
  };
  return { url: target.url, headers: webhookHeaders(target), body: JSON.stringify(body) };
}

/** A webhook POST's headers: the target's own, then the JSON content type and the server's user agent. */
export function webhookHeaders(target: Extract<NotifyTarget, { type: 'webhook' }>): Record<string, string> {
  return {
    // Lower-cased, so that a configured Content-Type is replaced, not sent twice.
    ...Object.fromEntries(Object.entries(target.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value])),
    'content-type': 'application/json',
    'user-agent': `molf-server/${SERVER_VERSION}`,
  };
}
