import type { ServerResponse } from 'node:http';
import {
  APPROVAL_LINKS_PATH,
  type ApprovalLinks,
  type LinkAnswer,
  type LinkInspection,
  toApprovalWhat,
  toAskReasons,
  toSubjectText,
} from '../notify/index.ts';
import type { HttpRoute } from './handle-http.ts';
import { readBoundedBody } from './read-bounded-body.ts';
import { LINK_PAGE_HEADERS, renderLinkPage } from './render-link-page.ts';

const PREFIX = `/${APPROVAL_LINKS_PATH}`;
/** A link's POST carries nothing we read (ntfy sends an empty body, a form one field at most). */
const MAX_BODY_BYTES = 4_096;

type Page = { status: number; title: string; message: string; details?: string; form?: { button: string } };

/** Every refusal that a token's owner may learn from: never which part of a bad token failed. */
function toRefusal(type: 'invalid' | 'expired' | 'used' | 'answered'): Page {
  switch (type) {
    case 'invalid':
      return { status: 404, title: 'Link not valid', message: 'This link is not valid.' };
    case 'expired':
      return { status: 410, title: 'Link expired', message: 'This link has expired. Answer in a Molf client.' };
    case 'used':
      return { status: 410, title: 'Link used', message: 'This link was already used.' };
    case 'answered':
      return {
        status: 410,
        title: 'Already answered',
        message: 'This approval was already answered in another client or by another link, or it no longer waits.',
      };
  }
}

function toInspectionPage(inspection: LinkInspection): Page {
  if (inspection.type !== 'pending') return toRefusal(inspection.type);
  const { approval, decision } = inspection;
  const what = toApprovalWhat(approval);
  return {
    status: 200,
    title: decision === 'approve' ? `Approve ${what}?` : `Deny ${what}?`,
    message: `${toAskReasons(approval).join('. ')}. Nothing happens until you press the button.`,
    details: toSubjectText(approval),
    form: { button: decision === 'approve' ? 'Approve once' : 'Deny' },
  };
}

function toAnswerPage(answer: LinkAnswer): Page {
  if (answer.type !== 'applied') return toRefusal(answer.type);
  return answer.decision === 'approve'
    ? { status: 200, title: 'Approved', message: `Approved once: the ${answer.approval.tool} call runs.` }
    : {
        status: 200,
        title: 'Denied',
        message: `Denied: the model is told you refused the ${answer.approval.tool} call.`,
      };
}

function send(response: ServerResponse, page: Page, extraHeaders: Record<string, string> = {}): void {
  const { status, ...content } = page;
  response.writeHead(status, { ...LINK_PAGE_HEADERS, ...extraHeaders }).end(renderLinkPage(content));
}

/**
 * `/approval-links/<token>`: `GET` shows what the link would do and a button, and answers nothing
 * (link previews and scanners fetch links); `POST` answers the approval once. 200 when it did, 410
 * when the link expired, was used or the approval was answered elsewhere, 404 for a link that is
 * not one of ours.
 */
export function createApprovalLinkRoute(options: { links: ApprovalLinks }): HttpRoute {
  const { links } = options;
  return {
    matches: (path) => path.startsWith(PREFIX),
    async handle(request, response, path) {
      const token = path.slice(PREFIX.length);
      switch (request.method) {
        case 'GET':
        case 'HEAD':
          send(response, toInspectionPage(await links.inspect(token)));
          return;
        case 'POST': {
          if (!(await readBoundedBody(request, MAX_BODY_BYTES))) {
            send(
              response,
              { status: 413, title: 'Too large', message: 'This link takes no request body.' },
              { connection: 'close' },
            );
            return;
          }
          send(response, toAnswerPage(await links.answer(token)));
          return;
        }
        default:
          send(
            response,
            { status: 405, title: 'Not allowed', message: 'Open this link, or POST to it.' },
            { allow: 'GET, HEAD, POST' },
          );
      }
    },
  };
}
