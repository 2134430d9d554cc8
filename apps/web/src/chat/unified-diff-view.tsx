import type { FileDiff } from '@molf/protocol';
import { createMemo, For, Show } from 'solid-js';
import { unifiedDiffLines } from './unified-diff-lines.ts';

/**
 * A change as the worker diffed it against the file itself (an approval's preview, an edit's
 * result): hunks with their context, removed lines red, added green, and the worker's note when the
 * diff is cut or missing (binary, too large, a file the rules keep from being shown).
 */
export function UnifiedDiffView(props: { path: string; diff: FileDiff; kind: 'edit' | 'write' }) {
  const lines = createMemo(() => unifiedDiffLines(props.diff.diff));
  return (
    <div class="diff" data-testid="diff" data-source="worker">
      <div class="diff-path">
        {props.kind === 'write' ? 'write ' : 'edit '}
        <code>{props.path}</code>
      </div>
      <For each={lines()}>
        {(line) =>
          line.type === 'hunk' ? (
            <div class="diff-sep">{line.text}</div>
          ) : line.type === 'meta' ? (
            <div class="diff-sep muted">{line.text}</div>
          ) : (
            <div class={`diff-line diff-${line.type}`}>
              <span class="diff-mark" aria-hidden="true">
                {line.type === 'add' ? '+' : line.type === 'remove' ? '−' : ' '}
              </span>
              <span class="diff-text">{line.text}</span>
            </div>
          )
        }
      </For>
      <Show when={props.diff.note}>
        {(note) => (
          <div class="diff-sep muted" data-testid="diff-note">
            {note()}
          </div>
        )}
      </Show>
    </div>
  );
}
