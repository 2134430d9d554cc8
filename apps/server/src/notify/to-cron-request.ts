import type { CronEvent } from '@molf/protocol';
import { SERVER_VERSION } from '../version.ts';
import type { NotifyTarget } from './notify-settings.ts';
import type { OutgoingRequest } from './outgoing-request.ts';
import { toHeaderText } from './to-ntfy-request.ts';
import { webhookHeaders } from './to-webhook-request.ts';

/** What people are told of: a run that failed, and a heartbeat that found something. */
export type CronNotice = Extract<CronEvent, { type: 'cron.failed' | 'cron.reported' }>;

const MAX_TEXT_CHARS = 3_000;
const MAX_TITLE_CHARS = 120;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/**
 * A cron notice for one target: the generic webhook gets the event as JSON
 * (`{ type: "cron.failed" | "cron.reported", event, worker }`), an ntfy topic a titled text message.
 */
export function toCronRequest(
  notice: CronNotice,
  worker: { workerId: string; name: string | undefined },
  target: NotifyTarget,
): OutgoingRequest {
  if (target.type === 'webhook') {
    return {
      url: target.url,
      headers: webhookHeaders(target),
      body: JSON.stringify({ type: notice.type, event: notice, worker }),
    };
  }
  const workerName = worker.name ?? worker.workerId;
  const failed = notice.type === 'cron.failed';
  const title = failed
    ? `Scheduled prompt "${notice.name}" failed on ${workerName}`
    : `"${notice.name}" on ${workerName} needs attention`;
  const body = failed
    ? [
        cut(notice.reason, MAX_TEXT_CHARS),
        notice.retryAt === undefined ? 'Not retried.' : `Retried at ${notice.retryAt}.`,
        `job ${notice.jobId}`,
      ].join('\n')
    : [cut(notice.text, MAX_TEXT_CHARS), `session ${notice.sessionId}, job ${notice.jobId}`].join('\n');
  return {
    url: target.url,
    headers: {
      title: toHeaderText(cut(title, MAX_TITLE_CHARS)),
      tags: failed ? 'alarm_clock,warning' : 'alarm_clock,loudspeaker',
      priority: failed ? 'default' : 'high',
      'content-type': 'text/plain; charset=utf-8',
      'user-agent': `molf-server/${SERVER_VERSION}`,
      ...(target.token === undefined ? {} : { authorization: `Bearer ${target.token}` }),
    },
    body,
  };
}
