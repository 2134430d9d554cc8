import { createVirtualizer } from '@tanstack/solid-virtual';
import { createMemo, createSignal, Show } from 'solid-js';

/** Shown in full up to this many characters; longer text is collapsed to its start. */
const PREVIEW_CHARS = 4_000;
const PREVIEW_LINES = 40;
const LINE_HEIGHT = 18;

/**
 * A tool's output, which may be megabytes: collapsed to its first lines, and on demand the whole
 * text in a virtualised view that puts only the visible lines in the page.
 */
export function LongText(props: { text: string; class?: string; label?: string }) {
  const [expanded, setExpanded] = createSignal(false);
  const lines = createMemo(() => (expanded() ? props.text.split('\n') : []));
  const isLong = () => props.text.length > PREVIEW_CHARS || countLines(props.text, PREVIEW_LINES + 1) > PREVIEW_LINES;
  const preview = () => {
    const head = props.text.slice(0, PREVIEW_CHARS);
    return head.split('\n').slice(0, PREVIEW_LINES).join('\n');
  };
  return (
    <div class={`long-text ${props.class ?? ''}`}>
      <Show
        when={expanded()}
        fallback={
          <>
            <pre class="output" data-label={props.label}>
              {isLong() ? preview() : props.text}
            </pre>
            <Show when={isLong()}>
              <button type="button" class="link-button" onClick={() => setExpanded(true)}>
                Show all ({formatSize(props.text.length)}, {countLines(props.text, Number.POSITIVE_INFINITY)} lines)
              </button>
            </Show>
          </>
        }
      >
        <VirtualLines lines={lines()} label={props.label} />
        <button type="button" class="link-button" onClick={() => setExpanded(false)}>
          Collapse
        </button>
      </Show>
    </div>
  );
}

function VirtualLines(props: { lines: string[]; label?: string | undefined }) {
  let scroller: HTMLDivElement | undefined;
  const virtualizer = createVirtualizer({
    get count() {
      return props.lines.length;
    },
    getScrollElement: () => scroller ?? null,
    estimateSize: () => LINE_HEIGHT,
    overscan: 20,
  });
  return (
    <div ref={scroller} class="output virtual-output" data-label={props.label} data-testid="virtual-output">
      <div style={{ height: `${virtualizer.getTotalSize()}px`, position: 'relative' }}>
        {virtualizer.getVirtualItems().map((row) => (
          <div class="virtual-line" style={{ transform: `translateY(${row.start}px)`, height: `${LINE_HEIGHT}px` }}>
            {props.lines[row.index]}
          </div>
        ))}
      </div>
    </div>
  );
}

function countLines(text: string, max: number): number {
  let count = 1;
  for (let index = text.indexOf('\n'); index !== -1 && count < max; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}

export function formatSize(chars: number): string {
  if (chars < 1024) return `${chars} B`;
  if (chars < 1024 * 1024) return `${(chars / 1024).toFixed(1)} KB`;
  return `${(chars / 1024 / 1024).toFixed(1)} MB`;
}
