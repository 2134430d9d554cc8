import { formatUtcTime } from '@molf/protocol';
import { For, Show } from 'solid-js';
import type { CronStore } from './cron-store.ts';

/**
 * Failed scheduled runs, in a corner over whatever view is open: they block nothing and stay until
 * dismissed (or until the worker's Scheduled view is opened), so a prompt that did not run is seen.
 */
export function CronFailureNotices(props: { cron: CronStore; onOpen: (workerId: string) => void }) {
  return (
    <Show when={props.cron.failures().length > 0}>
      <section class="toasts" aria-label="failed scheduled prompts" aria-live="polite">
        <For each={props.cron.failures()}>
          {(notice) => (
            <div class="toast toast-warn" role="alert" data-testid="cron-failure-notice" data-job={notice.jobId}>
              <div>
                <strong>⏰ The scheduled prompt “{notice.name}” did not run</strong>
              </div>
              <div class="small">{notice.reason}</div>
              <Show when={notice.retryAt}>
                {(retryAt) => <div class="muted small">Tried again at {formatUtcTime(retryAt())}.</div>}
              </Show>
              <div class="toast-actions">
                <button type="button" class="link-button" onClick={() => props.onOpen(notice.workerId)}>
                  Open Scheduled
                </button>
                <button
                  type="button"
                  class="link-button"
                  aria-label={`dismiss the notice of ${notice.name}`}
                  onClick={() => props.cron.dismiss(notice.jobId)}
                >
                  dismiss
                </button>
              </div>
            </div>
          )}
        </For>
      </section>
    </Show>
  );
}
