import type { Approval } from '@molf/protocol';
import { createEffect, on } from 'solid-js';
import { callSubject } from '../chat/call-subject.ts';

/**
 * A system notification for each new approval while the page is in the background (another tab,
 * another window): an approval must not wait unseen. Clicking it brings the page back.
 */
export function notifyInBackground(pending: () => Approval[], onOpen: (approval: Approval) => void): void {
  const notified = new Set<string>();
  createEffect(
    on(pending, (list) => {
      for (const approval of list) {
        if (notified.has(approval.approvalId)) continue;
        notified.add(approval.approvalId);
        if (!document.hidden || typeof Notification === 'undefined' || Notification.permission !== 'granted') continue;
        const subject = callSubject(approval.tool, approval.args);
        const notification = new Notification(`Molf: ${approval.tool} waits for you`, {
          body: subject.slice(0, 200),
          tag: approval.approvalId,
        });
        notification.onclick = () => {
          window.focus();
          onOpen(approval);
          notification.close();
        };
      }
      const waiting = new Set(list.map((approval) => approval.approvalId));
      for (const id of notified) if (!waiting.has(id)) notified.delete(id);
    }),
  );
}
