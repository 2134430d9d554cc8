import { createResource, For, Show } from 'solid-js';
import type { FileChange } from './file-change.ts';

type DiffLine = { type: 'add' | 'remove' | 'same'; text: string };

/** Lines of one replacement, computed by jsdiff (loaded with the first diff shown). */
async function diffLines(before: string, after: string): Promise<DiffLine[]> {
  const { diffLines: diff } = await import('diff');
  const lines: DiffLine[] = [];
  for (const part of diff(before, after)) {
    const type = part.added ? 'add' : part.removed ? 'remove' : 'same';
    const texts = part.value.replace(/\n$/, '').split('\n');
    for (const text of texts) lines.push({ type, text });
  }
  return lines;
}

/** Lines past this are summarised: a diff is for reviewing, and the full content is in the call. */
const MAX_LINES = 2_000;

/** An edit or a write as a diff: removed lines red, added green. */
export function DiffView(props: { change: FileChange }) {
  const [hunks] = createResource(
    () => props.change,
    async (change) => Promise.all(change.hunks.map((hunk) => diffLines(hunk.before, hunk.after))),
  );
  return (
    <div class="diff" data-testid="diff">
      <div class="diff-path">
        {props.change.kind === 'write' ? 'write ' : 'edit '}
        <code>{props.change.path}</code>
      </div>
      <Show when={hunks()} fallback={<div class="muted">computing the diff…</div>}>
        {(loaded) => (
          <For each={loaded()}>
            {(lines, index) => (
              <div class="diff-hunk">
                <Show when={index() > 0}>
                  <div class="diff-sep">⋯</div>
                </Show>
                <For each={lines.slice(0, MAX_LINES)}>
                  {(line) => (
                    <div class={`diff-line diff-${line.type}`}>
                      <span class="diff-mark" aria-hidden="true">
                        {line.type === 'add' ? '+' : line.type === 'remove' ? '−' : ' '}
                      </span>
                      <span class="diff-text">{line.text}</span>
                    </div>
                  )}
                </For>
                <Show when={lines.length > MAX_LINES}>
                  <div class="muted">… {lines.length - MAX_LINES} more lines</div>
                </Show>
              </div>
            )}
          </For>
        )}
      </Show>
    </div>
  );
}
