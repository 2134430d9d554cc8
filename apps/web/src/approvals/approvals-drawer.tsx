import type { Approval } from '@molf/protocol';
import { For, Show } from 'solid-js';
import type { Rights } from '../auth/rights.ts';
import { ApprovalCard } from './approval-card.tsx';
import type { ApprovalsStore } from './approvals-store.ts';

/** Every approval waiting, across sessions and workers, each answerable here or opened in its session. */
export function ApprovalsDrawer(props: {
  approvals: ApprovalsStore;
  rights: Rights;
  onOpen: (approval: Approval) => void;
  onClose: () => void;
}) {
  return (
    <aside class="drawer" aria-label="pending approvals" data-testid="approvals-drawer">
      <header class="drawer-head">
        <h2>Waiting for you</h2>
        <button type="button" onClick={() => props.onClose()} aria-label="close">
          ✕
        </button>
      </header>
      <Show when={props.approvals.pending().length > 0} fallback={<p class="muted">Nothing waits.</p>}>
        <For each={props.approvals.pending()}>
          {(approval) => (
            <div class="drawer-item">
              <Show when={approval.kind !== 'mcp_server'}>
                <button type="button" class="link-button" onClick={() => props.onOpen(approval)}>
                  Open its session
                </button>
              </Show>
              <ApprovalCard
                approval={approval}
                keyboard={false}
                rights={props.rights}
                onAnswer={(choice) => props.approvals.answer(approval, choice)}
              />
            </div>
          )}
        </For>
      </Show>
    </aside>
  );
}
