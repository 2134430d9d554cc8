import type { Approval, SessionInfo, WorkerInfo } from '@molf/protocol';
import { createEffect, createMemo, createSignal, For, lazy, on, onCleanup, Show } from 'solid-js';
import { ApprovalsDrawer } from './approvals/approvals-drawer.tsx';
import { createApprovalsStore } from './approvals/approvals-store.ts';
import { notifyInBackground } from './approvals/notify-in-background.ts';
import { warmUpMarkdown } from './chat/render-markdown.ts';
import { openSession, type SessionModel } from './chat/session-model.ts';
import { SessionView } from './chat/session-view.tsx';
import { CronFailureNotices } from './cron/cron-failure-notices.tsx';
import { createCronStore } from './cron/cron-store.ts';
import { toCronJobState } from './cron/describe-cron-job.ts';
import { LinkBanner } from './link/link-banner.tsx';
import { errorMessage } from './link/rpc-error.ts';
import type { ServerLink } from './link/server-link.ts';
import { PermissionsView } from './permissions/permissions-view.tsx';
import { markSeen } from './sessions/seen-sessions.ts';
import { SessionList } from './sessions/session-list.tsx';
import { WorkerDetails } from './workers/worker-details.tsx';
import { createWorkersStore } from './workers/workers-store.ts';

/** The Scheduled view loads when first opened: the first paint waits for none of it. */
const CronView = lazy(() => import('./cron/cron-view.tsx').then((module) => ({ default: module.CronView })));

type Tab =
  | { type: 'session'; id: string; model: SessionModel }
  | { type: 'permissions'; id: string; workerId: string }
  | { type: 'cron'; id: string; workerId: string };

const SESSION_PATH = /^\/s\/([^/]+)$/;
const CRON_PATH = /^\/w\/([^/]+)\/cron$/;

/** The page once logged in: workers and sessions on the side, open sessions in tabs (two side by side in a split). */
export function Workspace(props: { link: ServerLink; onLogOut: (reason?: string) => void }) {
  const { link } = props;
  warmUpMarkdown();
  const workers = createWorkersStore(link);
  const approvals = createApprovalsStore(link);
  const cron = createCronStore(link);
  /** Sessions that cron runs go into (a job's target, a run's new session), for the session list's mark. */
  const scheduledSessions = createMemo(() => {
    const marks = new Map<string, { name: string; failing: boolean }>();
    for (const job of cron.jobs() ?? []) {
      const mark = { name: job.name, failing: job.consecutiveFailures > 0 || job.lastRun?.outcome === 'failed' };
      if (job.lastRun?.sessionId !== undefined) marks.set(job.lastRun.sessionId, mark);
      if (job.target.type === 'session') marks.set(job.target.sessionId, mark);
    }
    return marks;
  });
  const [workerId, setWorkerId] = createSignal<string>();
  const [tabs, setTabs] = createSignal<Tab[]>([]);
  const [activeId, setActiveId] = createSignal<string>();
  const [splitId, setSplitId] = createSignal<string>();
  const [drawer, setDrawer] = createSignal(false);
  const [menu, setMenu] = createSignal(false);
  const [listVersion, setListVersion] = createSignal(0);
  const [models, setModels] = createSignal<string[]>([]);
  const [failure, setFailure] = createSignal<string>();

  // A token revoked while the page is open: back to the login form, saying why.
  createEffect(() => {
    const state = link.state();
    if (state.type === 'refused') props.onLogOut(`The server refused this token: ${state.message}`);
  });

  const worker = createMemo<WorkerInfo | undefined>(
    () => workers.workers().find((item) => item.workerId === workerId()) ?? workers.workers()[0],
  );
  const online = (id: string | undefined) => workers.workers().find((item) => item.workerId === id)?.state === 'online';

  // The picker's list: the configured default, custom providers' models, recently used ones.
  createEffect(
    on(link.reconnects, () => {
      link.client.rpc.models.list
        .query()
        .then((list) => setModels(list.models.map((model) => model.id)))
        .catch(() => {});
    }),
  );

  const openTab = (sessionId: string) => {
    if (!tabs().some((tab) => tab.id === sessionId)) {
      setTabs([...tabs(), { type: 'session', id: sessionId, model: openSession(link, sessionId) }]);
    }
    setActiveId(sessionId);
    setMenu(false);
  };
  const closeTab = (id: string) => {
    const tab = tabs().find((item) => item.id === id);
    if (tab?.type === 'session') tab.model.dispose();
    const rest = tabs().filter((item) => item.id !== id);
    setTabs(rest);
    if (splitId() === id) setSplitId(undefined);
    if (activeId() === id) setActiveId(rest[rest.length - 1]?.id);
  };
  onCleanup(() => {
    for (const tab of tabs()) if (tab.type === 'session') tab.model.dispose();
  });

  const activeTab = () => tabs().find((tab) => tab.id === activeId());
  const splitTab = () => tabs().find((tab) => tab.id === splitId() && tab.id !== activeId());

  const openScheduled = (id: string) => {
    const tabId = `cron:${id}`;
    if (!tabs().some((tab) => tab.id === tabId)) setTabs([...tabs(), { type: 'cron', id: tabId, workerId: id }]);
    setActiveId(tabId);
    setWorkerId(id);
    setMenu(false);
  };

  // The address names the session (or worker's Scheduled view) on screen: a reload or a shared link opens it again.
  const initial = SESSION_PATH.exec(window.location.pathname)?.[1];
  if (initial !== undefined) openTab(decodeURIComponent(initial));
  const initialCron = CRON_PATH.exec(window.location.pathname)?.[1];
  if (initialCron !== undefined) openScheduled(decodeURIComponent(initialCron));
  createEffect(() => {
    const tab = activeTab();
    const path =
      tab?.type === 'session'
        ? `/s/${encodeURIComponent(tab.id)}`
        : tab?.type === 'cron'
          ? `/w/${encodeURIComponent(tab.workerId)}/cron`
          : '/';
    if (window.location.pathname !== path) window.history.replaceState(null, '', path);
  });
  // Failures of the worker whose Scheduled view is on screen are shown there: no notice for them.
  createEffect(() => {
    if (cron.failures().length === 0) return;
    for (const tab of [activeTab(), splitTab()]) if (tab?.type === 'cron') cron.dismissWorker(tab.workerId);
  });
  /** A worker's jobs that need a look: failing ones, and failed runs not dismissed. */
  const cronTrouble = (id: string) => {
    const jobIds = new Set(cron.failures().flatMap((notice) => (notice.workerId === id ? [notice.jobId] : [])));
    for (const job of cron.jobs() ?? []) {
      if (job.workerId === id && toCronJobState(job).type === 'failing') jobIds.add(job.jobId);
    }
    return jobIds.size;
  };
  // What the person saw is no longer unread.
  createEffect(() => {
    const tab = activeTab();
    if (tab?.type !== 'session') return;
    const info = tab.model.info();
    if (info !== undefined) markSeen(info.sessionId, info.updatedAt);
  });
  // Opening a session of another worker shows that worker's sessions.
  createEffect(
    on(
      // Its worker is known once the session's info has loaded.
      () => {
        const tab = activeTab();
        return tab?.type === 'session' ? tab.model.info()?.workerId : undefined;
      },
      (owner) => {
        if (owner !== undefined) setWorkerId(owner);
      },
    ),
  );

  notifyInBackground(approvals.pending, (approval) => openApproval(approval));
  const openApproval = (approval: Approval) => {
    const sessionId = approval.subagent?.parentSessionId ?? approval.sessionId;
    if (approval.kind !== 'mcp_server') openTab(sessionId);
    setDrawer(approval.kind === 'mcp_server');
  };

  const createSession = async () => {
    const current = worker();
    if (current === undefined) return;
    try {
      const session = await link.client.rpc.sessions.create.mutate({ workerId: current.workerId });
      setListVersion((version) => version + 1);
      openTab(session.sessionId);
    } catch (error) {
      setFailure(errorMessage(error));
    }
  };
  const renameSession = async (session: SessionInfo) => {
    const name = window.prompt('New name of the session', session.name);
    if (name === null || name.trim() === '') return;
    try {
      await link.client.rpc.sessions.rename.mutate({ sessionId: session.sessionId, name: name.trim() });
      setListVersion((version) => version + 1);
    } catch (error) {
      setFailure(errorMessage(error));
    }
  };
  const deleteSession = async (session: SessionInfo) => {
    if (!window.confirm(`Delete the session "${session.name}" and its history? This cannot be undone.`)) return;
    try {
      await link.client.rpc.sessions.delete.mutate({ sessionId: session.sessionId });
      closeTab(session.sessionId);
      setListVersion((version) => version + 1);
    } catch (error) {
      setFailure(errorMessage(error));
    }
  };
  const openPermissions = (id: string) => {
    const tabId = `permissions:${id}`;
    if (!tabs().some((tab) => tab.id === tabId)) setTabs([...tabs(), { type: 'permissions', id: tabId, workerId: id }]);
    setActiveId(tabId);
    setMenu(false);
  };

  const workerName = (id: string) => workers.workers().find((item) => item.workerId === id)?.name ?? '';
  const tabLabel = (tab: Tab) => {
    switch (tab.type) {
      case 'session':
        return tab.model.info()?.name ?? tab.id.slice(0, 8);
      case 'permissions':
        return `Permissions · ${workerName(tab.workerId)}`;
      case 'cron':
        return `Scheduled · ${workerName(tab.workerId)}`;
    }
  };

  const renderTab = (tab: Tab, active: boolean) => {
    switch (tab.type) {
      case 'session':
        return (
          <SessionView
            model={tab.model}
            link={link}
            approvals={approvals}
            models={models()}
            active={active}
            workerOnline={online(tab.model.info()?.workerId) || tab.model.info() === undefined}
            jobName={cron.jobName}
          />
        );
      case 'permissions':
        return <PermissionsView link={link} workerId={tab.workerId} />;
      case 'cron':
        return <CronView link={link} cron={cron} workerId={tab.workerId} onOpenSession={openTab} />;
    }
  };

  return (
    <div class="workspace" classList={{ 'menu-open': menu() }}>
      <header class="topbar">
        <button type="button" class="menu-button" aria-label="menu" onClick={() => setMenu(!menu())}>
          ☰
        </button>
        <strong class="brand">Molf</strong>
        <LinkBanner state={link.state()} />
        <span class="spacer" />
        <Show when={link.whoami.role !== 'admin'}>
          <span class="badge" data-testid="role" title="the role of this credential">
            {link.whoami.role}
          </span>
        </Show>
        <NotificationToggle />
        <button
          type="button"
          class="approvals-badge"
          classList={{ hot: approvals.pending().length > 0 }}
          data-testid="approvals-badge"
          onClick={() => setDrawer(!drawer())}
          aria-label={`${approvals.pending().length} approvals waiting`}
        >
          ⚑ {approvals.pending().length}
        </button>
        <button type="button" onClick={() => props.onLogOut()}>
          Log out
        </button>
      </header>

      <nav class="sidebar" aria-label="workers and sessions">
        <section>
          <h2 class="section-title">Workers</h2>
          <Show when={workers.workers().length === 0}>
            <p class="muted small">
              No worker has registered yet: start one with <code>molf worker</code>.
            </p>
          </Show>
          <ul class="plain worker-list" data-testid="workers">
            <For each={workers.workers()}>
              {(item) => (
                <li>
                  <button
                    type="button"
                    class="worker-row"
                    classList={{ active: item.workerId === worker()?.workerId }}
                    onClick={() => setWorkerId(item.workerId)}
                    data-testid="worker-row"
                  >
                    <span class={`status-dot ${item.state === 'online' ? 'online' : 'offline'}`} />
                    {item.name}
                    <span class="muted small"> {item.state}</span>
                    <Show when={cronTrouble(item.workerId) > 0}>
                      <span class="badge warn worker-trouble" title="scheduled prompts that failed">
                        ⏰ {cronTrouble(item.workerId)}
                      </span>
                    </Show>
                  </button>
                </li>
              )}
            </For>
          </ul>
          <Show when={worker()}>
            {(current) => (
              <>
                <WorkerDetails worker={current()} />
                <div class="worker-links">
                  {/* A worker's rules are an operator's to read (a viewer's calls would be refused). */}
                  <Show when={link.rights.operate}>
                    <button type="button" class="link-button" onClick={() => openPermissions(current().workerId)}>
                      Permissions
                    </button>
                  </Show>
                  <button
                    type="button"
                    class="link-button"
                    data-testid="open-scheduled"
                    onClick={() => openScheduled(current().workerId)}
                  >
                    Scheduled
                  </button>
                  <Show when={cronTrouble(current().workerId) > 0}>
                    <span class="badge warn" data-testid="scheduled-trouble" title="scheduled prompts that failed">
                      ⚠ {cronTrouble(current().workerId)}
                      <span class="visually-hidden"> scheduled prompts failed</span>
                    </span>
                  </Show>
                </div>
              </>
            )}
          </Show>
        </section>
        <Show when={worker()}>
          {(current) => (
            <section class="sessions-section">
              <div class="section-row">
                <h2 class="section-title">Sessions</h2>
                <Show when={link.rights.operate}>
                  <button type="button" class="primary" data-testid="new-session" onClick={() => void createSession()}>
                    New session
                  </button>
                </Show>
              </div>
              <SessionList
                link={link}
                workerId={current().workerId}
                activeSessionId={activeId()}
                version={listVersion()}
                onOpen={(session) => openTab(session.sessionId)}
                onRename={(session) => void renameSession(session)}
                onDelete={(session) => void deleteSession(session)}
                scheduledBy={(sessionId) => scheduledSessions().get(sessionId)}
              />
            </section>
          )}
        </Show>
      </nav>

      <main class="main">
        <Show when={failure()}>
          {(message) => (
            <div class="tool-error" role="alert">
              {message()}{' '}
              <button type="button" class="link-button" onClick={() => setFailure(undefined)}>
                dismiss
              </button>
            </div>
          )}
        </Show>
        <Show when={tabs().length > 0}>
          <div class="tabs" role="tablist">
            <For each={tabs()}>
              {(tab) => (
                <div class="tab" classList={{ active: tab.id === activeId(), split: tab.id === splitId() }}>
                  <button
                    type="button"
                    class="tab-open"
                    role="tab"
                    aria-selected={tab.id === activeId()}
                    onClick={() => setActiveId(tab.id)}
                    data-testid="tab"
                  >
                    <Show
                      when={
                        tab.type === 'session' &&
                        approvals
                          .pending()
                          .some(
                            (approval) =>
                              approval.sessionId === tab.id || approval.subagent?.parentSessionId === tab.id,
                          )
                      }
                    >
                      <span class="unread-dot" title="waits for approval">
                        <span class="visually-hidden">waits for approval</span>
                      </span>
                    </Show>
                    {tabLabel(tab)}
                  </button>
                  <button
                    type="button"
                    title="show beside"
                    aria-label="show beside"
                    onClick={() => setSplitId(splitId() === tab.id ? undefined : tab.id)}
                  >
                    ◫
                  </button>
                  <button type="button" title="close" aria-label="close tab" onClick={() => closeTab(tab.id)}>
                    ✕
                  </button>
                </div>
              )}
            </For>
          </div>
        </Show>
        <div class="panes" classList={{ 'two-panes': splitTab() !== undefined }}>
          <Show
            when={activeTab()}
            fallback={
              <div class="empty">
                <p>Open a session on the left, or start a new one.</p>
              </div>
            }
          >
            {(tab) => <div class="pane">{renderTab(tab(), true)}</div>}
          </Show>
          <Show when={splitTab()}>{(tab) => <div class="pane">{renderTab(tab(), false)}</div>}</Show>
        </div>
      </main>
      <Show when={drawer()}>
        <ApprovalsDrawer
          approvals={approvals}
          rights={link.rights}
          onOpen={openApproval}
          onClose={() => setDrawer(false)}
        />
      </Show>
      <CronFailureNotices cron={cron} onOpen={openScheduled} />
    </div>
  );
}

function NotificationToggle() {
  const supported = typeof Notification !== 'undefined';
  const [permission, setPermission] = createSignal(supported ? Notification.permission : 'denied');
  return (
    <Show when={supported && permission() === 'default'}>
      <button
        type="button"
        title="Be told of approvals while this tab is in the background"
        onClick={() => void Notification.requestPermission().then(setPermission)}
      >
        Enable notifications
      </button>
    </Show>
  );
}
