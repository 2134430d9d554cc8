import type { SessionInfo } from '@molf/protocol';
import { createVirtualizer } from '@tanstack/solid-virtual';
import { createEffect, createSignal, Index, on, onCleanup, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import type { ServerLink } from '../link/server-link.ts';
import { isUnread } from './seen-sessions.ts';

const PAGE = 100;
const ROW_HEIGHT = 52;
const REFRESH_MS = 5_000;

/**
 * A worker's sessions, newest first: searched by name on the server and read a page at a time as
 * the list scrolls, virtualised, so that ten thousand sessions stay fast. Running sessions and
 * sessions changed since this browser showed them are marked.
 */
export function SessionList(props: {
  link: ServerLink;
  workerId: string;
  activeSessionId: string | undefined;
  /** Bumped by the page when it changed a session (created, renamed, deleted). */
  version: number;
  onOpen: (session: SessionInfo) => void;
  onRename: (session: SessionInfo) => void;
  onDelete: (session: SessionInfo) => void;
  /** The cron job whose runs go into a session (its target, or its last run's), when there is one. */
  scheduledBy?: (sessionId: string) => { name: string; failing: boolean } | undefined;
}) {
  const [search, setSearch] = createSignal('');
  const [sessions, setSessions] = createSignal<SessionInfo[]>([]);
  const [total, setTotal] = createSignal(0);
  const [failure, setFailure] = createSignal<string>();
  let generation = 0;
  let loading = false;

  const fetchPage = async (offset: number, limit: number) => {
    const name = search().trim();
    return props.link.client.rpc.sessions.list.query({
      workerId: props.workerId,
      limit,
      offset,
      topLevel: true,
      ...(name === '' ? {} : { name }),
    });
  };
  /** Reads the list again from the top, as much of it as is loaded (at least a page). */
  const reload = async () => {
    const mine = ++generation;
    try {
      const page = await fetchPage(0, Math.min(200, Math.max(PAGE, sessions().length)));
      if (mine !== generation) return;
      setSessions(page.sessions);
      setTotal(page.total);
      setFailure(undefined);
    } catch (error) {
      if (mine === generation) setFailure(errorMessage(error));
    }
  };
  const loadMore = async () => {
    if (loading || sessions().length >= total()) return;
    loading = true;
    const mine = generation;
    try {
      const page = await fetchPage(sessions().length, PAGE);
      if (mine !== generation) return;
      const known = new Set(sessions().map((session) => session.sessionId));
      setSessions([...sessions(), ...page.sessions.filter((session) => !known.has(session.sessionId))]);
      setTotal(page.total);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      loading = false;
    }
  };

  createEffect(
    on([() => props.workerId, search, () => props.version, () => props.link.reconnects()], () => {
      setSessions([]);
      void reload();
    }),
  );
  const timer = setInterval(() => {
    if (document.visibilityState === 'visible' && props.link.state().type === 'connected') void reload();
  }, REFRESH_MS);
  onCleanup(() => clearInterval(timer));

  let scroller: HTMLDivElement | undefined;
  const virtualizer = createVirtualizer({
    get count() {
      return sessions().length;
    },
    getScrollElement: () => scroller ?? null,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });
  createEffect(() => {
    const items = virtualizer.getVirtualItems();
    const last = items[items.length - 1];
    if (last !== undefined && last.index >= sessions().length - 20) void loadMore();
  });

  return (
    <div class="session-list">
      <input
        type="search"
        class="search"
        data-testid="session-search"
        placeholder="Search sessions"
        aria-label="search sessions"
        value={search()}
        onInput={(event) => setSearch(event.currentTarget.value)}
      />
      <Show when={failure()}>{(message) => <div class="tool-error">{message()}</div>}</Show>
      <div class="muted small" data-testid="session-count">
        {total()} session{total() === 1 ? '' : 's'}
      </div>
      <div ref={scroller} class="session-scroller" data-testid="session-list">
        <div style={{ height: `${virtualizer.getTotalSize()}px`, position: 'relative' }}>
          <Index each={virtualizer.getVirtualItems()}>
            {(row) => (
              <Show when={sessions()[row().index]}>
                {(session) => (
                  <div
                    class="session-row"
                    classList={{ active: session().sessionId === props.activeSessionId }}
                    style={{ transform: `translateY(${row().start}px)`, height: `${ROW_HEIGHT}px` }}
                    data-testid="session-row"
                  >
                    <button type="button" class="session-open" onClick={() => props.onOpen(session())}>
                      <span class="session-name">
                        <Show when={session().status === 'busy'}>
                          <span class="running-dot" title="running">
                            <span class="visually-hidden">running</span>
                          </span>
                        </Show>
                        <Show when={isUnread(session().sessionId, session().updatedAt)}>
                          <span class="unread-dot" title="unread">
                            <span class="visually-hidden">unread</span>
                          </span>
                        </Show>
                        <Show when={props.scheduledBy?.(session().sessionId)}>
                          {(job) => (
                            <span
                              class="cron-mark"
                              classList={{ failing: job().failing }}
                              title={`scheduled: ${job().name}${job().failing ? ' (its last run failed)' : ''}`}
                              data-testid="session-cron"
                            >
                              {job().failing ? '⚠' : '⏰'}
                              <span class="visually-hidden">
                                scheduled: {job().name}
                                {job().failing ? ', failing' : ''}
                              </span>
                            </span>
                          )}
                        </Show>
                        {session().name}
                      </span>
                      <span class="muted small">
                        {new Date(session().updatedAt).toLocaleString()} · {session().messageCount} msgs
                      </span>
                    </button>
                    <Show when={props.link.rights.operate}>
                      <span class="row-actions">
                        <button
                          type="button"
                          title="rename"
                          aria-label={`rename ${session().name}`}
                          onClick={() => props.onRename(session())}
                        >
                          ✎
                        </button>
                        <button
                          type="button"
                          title="delete"
                          aria-label={`delete ${session().name}`}
                          onClick={() => props.onDelete(session())}
                        >
                          ✕
                        </button>
                      </span>
                    </Show>
                  </div>
                )}
              </Show>
            )}
          </Index>
        </div>
      </div>
    </div>
  );
}
