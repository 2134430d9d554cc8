import type { TranscriptItem } from '@molf/client';
import type { Approval } from '@molf/protocol';
import { createVirtualizer } from '@tanstack/solid-virtual';
import {
  createEffect,
  createMemo,
  createSignal,
  For,
  Index,
  Match,
  on,
  onCleanup,
  onMount,
  Show,
  Switch,
} from 'solid-js';
import { MarkdownView } from './markdown-view.tsx';
import { useSession } from './session-context.ts';
import { ToolCard } from './tool-card.tsx';

/** Whether a waiting approval is this call's. */
function isWaiting(item: TranscriptItem, approvals: readonly Approval[]): boolean {
  return (
    item.kind === 'tool' &&
    item.status === 'running' &&
    approvals.some((approval) => approval.sessionToolCallId === item.toolCallId)
  );
}

/** One item of a conversation (also a subagent's, nested in its task card). */
export function TranscriptItemView(props: { item: TranscriptItem; approvals: readonly Approval[] }) {
  const session = useSession();
  return (
    <Switch>
      <Match when={props.item.kind === 'user' && props.item}>
        {(item) => (
          <>
            {/* A prompt no person typed: it says which scheduled prompt sent it. */}
            <Show when={item().cronJobId}>
              {(jobId) => (
                <div class="cron-mark" data-testid="cron-mark" data-job={jobId()} title={`cron job ${jobId()}`}>
                  ⏰ scheduled: {session?.jobName?.(jobId()) ?? jobId()}
                </div>
              )}
            </Show>
            <div class="message user" data-testid="user-message" data-cron-job={item().cronJobId}>
              {item().text}
            </div>
          </>
        )}
      </Match>
      <Match when={props.item.kind === 'assistant' && props.item}>
        {(item) => (
          <div class="message assistant" data-testid="assistant-message" data-streaming={item().streaming}>
            <MarkdownView text={item().text} streaming={item().streaming} />
            {item().interrupted === true ? <div class="muted">(interrupted)</div> : null}
          </div>
        )}
      </Match>
      <Match when={props.item.kind === 'tool' && props.item}>
        {(item) => (
          <ToolCard
            call={item()}
            waiting={isWaiting(item(), props.approvals)}
            renderItems={(items) => <NestedItems items={items()} approvals={props.approvals} />}
          />
        )}
      </Match>
      <Match when={props.item.kind === 'summary' && props.item}>
        {(item) => (
          <details class="summary">
            <summary>Summary of earlier messages</summary>
            <MarkdownView text={item().text} streaming={false} />
          </details>
        )}
      </Match>
      <Match when={props.item.kind === 'notice' && props.item}>
        {(item) => <div class={`notice notice-${item().level}`}>{item().text}</div>}
      </Match>
    </Switch>
  );
}

/**
 * A subagent's items, in order, not virtualised (a task's work is short). Each keeps its view
 * while its item changes, like the rows of the transcript.
 */
function NestedItems(props: { items: TranscriptItem[]; approvals: readonly Approval[] }) {
  const byKey = createMemo(() => new Map(props.items.map((item) => [viewKeyOf(item), item])));
  return (
    <For each={props.items.map(viewKeyOf)}>
      {(key) => (
        <Show when={byKey().get(key)}>
          {(item) => <TranscriptItemView item={item()} approvals={props.approvals} />}
        </Show>
      )}
    </For>
  );
}

/**
 * A row's height before it is measured, close enough that opening a long session at its end
 * needs few corrections: a line of text is about 22 px, a collapsed card about 40.
 */
function estimateHeight(item: TranscriptItem | undefined): number {
  if (item === undefined) return 80;
  switch (item.kind) {
    case 'user':
    case 'assistant':
    case 'summary':
      return (
        24 +
        (item.kind === 'user' && item.cronJobId !== undefined ? 22 : 0) +
        22 * Math.min(60, Math.ceil(item.text.length / 90) + (item.text.match(/\n/g)?.length ?? 0))
      );
    case 'tool':
      return 52;
    case 'notice':
      return 40;
  }
}

/**
 * What a row's view and size are kept by: an answer keeps its stream's id from its first delta to
 * its completed message (whose key is the message id), so completing it redraws and re-measures nothing.
 */
function viewKeyOf(item: TranscriptItem | undefined): string | undefined {
  return item?.kind === 'assistant' ? (item.streamId ?? item.key) : item?.key;
}

/** About a pane's height, before it is measured. */
const INITIAL_VIEW_PX = 800;
/** The height of the "earlier messages" bar above the first item. */
const OLDER_BAR_PX = 44;
/** How near the first item shown a reader's scroll reads the page before (a screen or two). */
const READ_OLDER_WITHIN_PX = 1_500;

/**
 * A session's conversation, virtualised: only the items on screen are in the page, so a session
 * of thousands of messages opens as fast as a short one. It follows the end while the reader is
 * there, and stays put while they read further up. A long session shows its last page of
 * messages first; older pages are read as the reader scrolls up to them.
 */
export function TranscriptView(props: {
  items: TranscriptItem[];
  approvals: readonly Approval[];
  /** Older messages exist than `items` shows. */
  hasOlder: boolean;
  /** Reads the page before: its items are put first, and what the reader sees stays put. */
  loadOlder: () => Promise<void>;
}) {
  let scroller: HTMLDivElement | undefined;
  const [readingOlder, setReadingOlder] = createSignal(false);
  /**
   * Reads the page before. What the reader sees stays put: the view moves down by the height the
   * page added above, counted from where the first item was to where it is after (added to the
   * scroll position of that moment, so a scroll still gliding keeps its course).
   */
  const readOlder = () => {
    if (!props.hasOlder || readingOlder()) return;
    setReadingOlder(true);
    const firstKey = props.items[0]?.key;
    const firstStart = virtualizer.measurementsCache[0]?.start ?? 0;
    void props
      .loadOlder()
      .then(() => {
        const index = props.items.findIndex((item) => item.key === firstKey);
        const start = index === -1 ? undefined : virtualizer.measurementsCache[index]?.start;
        if (scroller !== undefined && start !== undefined) scroller.scrollTop += start - firstStart;
      })
      .finally(() => setReadingOlder(false));
  };
  /** The reader is at the end: new content keeps it in sight. */
  let atEnd = true;
  /**
   * When the reader last moved the view (wheel, touch, keys, the scrollbar). Only their scrolls may
   * leave the end: the virtualiser's own (a row measured, the end followed) must not.
   */
  let movedByReaderAt = 0;
  const readerMoved = () => {
    movedByReaderAt = Date.now();
  };
  const virtualizer = createVirtualizer({
    get count() {
      return props.items.length;
    },
    getScrollElement: () => scroller ?? null,
    estimateSize: (index) => estimateHeight(props.items[index]),
    overscan: 6,
    getItemKey: (index) => viewKeyOf(props.items[index]) ?? index,
    // Opened at its end: the first rows drawn are the last ones, not the first ones then the last.
    initialOffset: () =>
      Math.max(0, props.items.reduce((total, item) => total + estimateHeight(item), 0) - INITIAL_VIEW_PX),
    // Room for the "earlier messages" bar while older pages exist.
    get paddingStart() {
      return props.hasOlder ? OLDER_BAR_PX : 0;
    },
  });
  /** The item at `index` while it is the one of `key` (a slot's view never reads another item). */
  const itemOf = (index: number, key: string) => {
    const item = props.items[index];
    return viewKeyOf(item) === key ? item : undefined;
  };
  const toEnd = () => {
    if (props.items.length > 0) virtualizer.scrollToIndex(props.items.length - 1, { align: 'end' });
  };
  onMount(() => {
    toEnd();
    // The pane shrinks when an approval or an error shows below it: the end stays in sight.
    const observer = new ResizeObserver(() => {
      if (atEnd) toEnd();
    });
    if (scroller === undefined) return;
    observer.observe(scroller);
    // Passive: listening never delays scrolling.
    const element = scroller;
    const onScroll = () => {
      const nearEnd = element.scrollHeight - element.scrollTop - element.clientHeight < 48;
      if (nearEnd) atEnd = true;
      else if (Date.now() - movedByReaderAt < 1_000) atEnd = false;
      // The reader nears the first item shown: the page before is read while they get there.
      if (!atEnd && element.scrollTop < READ_OLDER_WITHIN_PX) readOlder();
    };
    const readerEvents = ['wheel', 'touchmove', 'keydown', 'pointerdown'] as const;
    for (const type of readerEvents) element.addEventListener(type, readerMoved, { passive: true });
    element.addEventListener('scroll', onScroll, { passive: true });
    onCleanup(() => {
      observer.disconnect();
      for (const type of readerEvents) element.removeEventListener(type, readerMoved);
      element.removeEventListener('scroll', onScroll);
    });
  });
  createEffect(
    on(
      () => [props.items.length, props.items[props.items.length - 1]],
      () => {
        if (atEnd) requestAnimationFrame(toEnd);
      },
    ),
  );
  return (
    <div ref={scroller} class="transcript" data-testid="transcript">
      <div class="transcript-inner" style={{ height: `${virtualizer.getTotalSize()}px` }}>
        <Show when={props.hasOlder}>
          <button
            type="button"
            class="older-messages"
            data-testid="older-messages"
            disabled={readingOlder()}
            onClick={() => {
              atEnd = false;
              readOlder();
            }}
          >
            {readingOlder() ? 'Reading earlier messages…' : 'Earlier messages'}
          </button>
        </Show>
        {/* Slots by position, not by row object: a row's item updates in place instead of being built again. */}
        <Index each={virtualizer.getVirtualItems()}>
          {(row) => {
            let element: HTMLDivElement | undefined;
            createEffect(
              on([() => row().index, () => props.items[row().index]], () => {
                if (element !== undefined) virtualizer.measureElement(element);
              }),
            );
            return (
              <div
                ref={element}
                class="transcript-row"
                data-index={row().index}
                style={{ transform: `translateY(${row().start}px)` }}
              >
                {/* Keyed by the item's view key: a slot reused for another item builds its view anew (a
                    kept Switch would read the old kind's accessor, stale), while an item that changes
                    (text streaming in, a call ending) updates the view it has: a streaming answer
                    draws only what is new. */}
                <Show when={viewKeyOf(props.items[row().index])} keyed>
                  {(key) => (
                    <Show when={itemOf(row().index, key)}>
                      {(item) => <TranscriptItemView item={item()} approvals={props.approvals} />}
                    </Show>
                  )}
                </Show>
              </div>
            );
          }}
        </Index>
      </div>
    </div>
  );
}
