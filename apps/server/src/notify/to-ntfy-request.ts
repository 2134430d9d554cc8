import { SERVER_VERSION } from '../version.ts';
import { toApprovalWhat, toAskReasons, toPlaceText, toSubjectText } from './describe-approval.ts';
import type { NotifyTarget } from './notify-settings.ts';
import type { ApprovalNotification, OutgoingRequest } from './outgoing-request.ts';

/** ntfy keeps a message of up to 4,096 bytes as text; the subject is cut well below that. */
const MAX_SUBJECT_CHARS = 3_000;
const MAX_TITLE_CHARS = 120;

/**
 * A header value as ntfy reads it: plain when it is printable ASCII, else an RFC 2047 encoded word
 * (ntfy decodes those; `fetch` refuses anything beyond Latin-1 and Latin-1 would be misread).
 */
export function toHeaderText(text: string): string {
  const oneLine = text.replace(/[\r\n\t]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(oneLine) ? oneLine : `=?UTF-8?B?${Buffer.from(oneLine).toString('base64')}?=`;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/**
 * A message to an ntfy topic: the subject as the body, a title naming the tool and the worker,
 * high priority, and two `http` action buttons that POST to the approve and deny links (the
 * notification is cleared once one is tapped). See https://docs.ntfy.sh/publish/#action-buttons.
 */
export function toNtfyRequest(
  notification: ApprovalNotification,
  target: Extract<NotifyTarget, { type: 'ntfy' }>,
): OutgoingRequest {
  const { approval, links } = notification;
  const workerName = notification.worker.name ?? notification.worker.workerId;
  const title = cut(`Approve ${toApprovalWhat(approval)} on ${workerName}?`, MAX_TITLE_CHARS);
  const body = [
    cut(toSubjectText(approval), MAX_SUBJECT_CHARS),
    '',
    ...toAskReasons(approval),
    toPlaceText(notification),
    `links expire at ${links.expiresAt}`,
  ].join('\n');
  // The simple action format: fields split at commas, actions at semicolons; the links hold
  // neither (base64url tokens, and publicUrl is checked for them).
  const actions = [
    `http, Approve, ${links.approve}, method=POST, clear=true`,
    `http, Deny, ${links.deny}, method=POST, clear=true`,
  ].join('; ');
  return {
    url: target.url,
    headers: {
      title: toHeaderText(title),
      tags: 'robot,question',
      priority: 'high',
      actions,
      'content-type': 'text/plain; charset=utf-8',
      'user-agent': `molf-server/${SERVER_VERSION}`,
      ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
    },
    body,
  };
}
