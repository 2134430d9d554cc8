import { isApprovalOfSession } from '@molf/client';
import { createMemo, createSignal, For, Show } from 'solid-js';
import { ApprovalCard } from '../approvals/approval-card.tsx';
import type { ApprovalsStore } from '../approvals/approvals-store.ts';
import type { ServerLink } from '../link/server-link.ts';
import { Composer } from './composer.tsx';
import { SessionContext } from './session-context.ts';
import type { SessionModel } from './session-model.ts';
import { TranscriptView } from './transcript-view.tsx';

/** One open session: its conversation, the approvals it waits for, and the prompt box. */
export function SessionView(props: {
  model: SessionModel;
  link: ServerLink;
  approvals: ApprovalsStore;
  models: string[];
  /** This pane has the keyboard (the one on screen, or the focused one of a split). */
  active: boolean;
  workerOnline: boolean;
  /** A scheduled prompt's name by its job id, for the prompts cron runs sent (default: the id is shown). */
  jobName?: (jobId: string) => string | undefined;
}) {
  const session = () => props.model;
  const [model, setModel] = createSignal('');
  const waiting = createMemo(() =>
    props.approvals.pending().filter((approval) => isApprovalOfSession(approval, session().sessionId)),
  );
  const gone = createMemo(() => props.approvals.gone().filter((item) => item.sessionId === session().sessionId));
  return (
    <SessionContext.Provider
      value={{
        link: props.link,
        sessionId: session().sessionId,
        ...(props.jobName === undefined ? {} : { jobName: props.jobName }),
      }}
    >
      <div class="session-view" data-testid="session-view" data-session={session().sessionId}>
        <header class="session-head">
          <h2>{session().info()?.name ?? '…'}</h2>
          <span class="muted">{session().info()?.model ?? ''}</span>
          <span class="session-status muted" data-testid="session-status">
            <span class={`status-dot ${session().busy() ? 'busy' : 'idle'}`} />
            {session().busy() ? 'working' : 'idle'}
          </span>
          <Show when={!props.workerOnline}>
            <span class="badge warn">worker offline</span>
          </Show>
        </header>
        <Show
          when={session().problem()}
          fallback={
            <>
              {/* Drawn once the history is read, so that it opens at its end at once. */}
              <Show when={session().loaded()} fallback={<div class="transcript" />}>
                <TranscriptView
                  items={session().transcript().items}
                  approvals={waiting()}
                  hasOlder={session().hasOlder()}
                  loadOlder={() => session().loadOlder()}
                />
              </Show>
              <div class="approvals-here">
                <For each={gone()}>
                  {(item) => (
                    <div class="notice notice-info" data-testid="approval-gone">
                      {item.text}
                    </div>
                  )}
                </For>
                <For each={waiting()}>
                  {(approval, index) => (
                    <ApprovalCard
                      approval={approval}
                      keyboard={props.active && index() === 0}
                      rights={props.link.rights}
                      onAnswer={(choice) => props.approvals.answer(approval, choice)}
                    />
                  )}
                </For>
              </div>
              <Show
                when={props.link.rights.operate}
                fallback={
                  <p class="composer read-only muted" data-testid="read-only">
                    Read-only: viewer credential. An operator or admin can prompt and stop this session.
                  </p>
                }
              >
                <Composer
                  sessionId={session().sessionId}
                  busy={session().busy()}
                  queued={session().transcript().queued}
                  disabled={session().info()?.parent !== undefined}
                  models={props.models}
                  model={model()}
                  onModel={setModel}
                  onSend={(text) => session().prompt(text, model())}
                  onStop={() => session().abort()}
                />
              </Show>
            </>
          }
        >
          {(problem) => (
            <div class="empty" role="alert" data-testid="session-problem">
              {problem().message}
            </div>
          )}
        </Show>
      </div>
    </SessionContext.Provider>
  );
}
