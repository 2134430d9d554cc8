import type { TranscriptItem, TranscriptToolCall } from '@molf/client';
import { createMemo, createSignal, For, Match, onCleanup, Show, Switch } from 'solid-js';
import { AttachmentView } from './attachment-view.tsx';
import { callSubject } from './call-subject.ts';
import { DiffView } from './diff-view.tsx';
import { fileChangeOf } from './file-change.ts';
import { FullOutput } from './full-output.tsx';
import { LongText } from './long-text.tsx';
import { SubagentHistory } from './subagent-history.tsx';
import { UnifiedDiffView } from './unified-diff-view.tsx';

/** The arguments each tool's one-line subject shows: a call with no others needs no argument block. */
const SUBJECT_KEYS: Record<string, readonly string[]> = {
  read_file: ['path'],
  glob: ['pattern', 'path'],
  grep: ['pattern', 'path'],
  skill: ['name'],
};

function subjectSaysAll(toolName: string, args: Record<string, unknown>): boolean {
  const keys = Object.keys(args);
  if (keys.length === 0) return true;
  const shown = SUBJECT_KEYS[toolName];
  return shown !== undefined && keys.every((key) => shown.includes(key));
}

function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** Seconds since a call started, ticking while it runs. */
function useElapsed(call: () => TranscriptToolCall): () => string | undefined {
  const [now, setNow] = createSignal(Date.now());
  const timer = setInterval(() => {
    if (call().status === 'running') setNow(Date.now());
  }, 1_000);
  onCleanup(() => clearInterval(timer));
  return () => {
    const { startedAt, endedAt } = call();
    if (startedAt === undefined) return undefined;
    const end = endedAt === undefined ? now() : Date.parse(endedAt);
    return formatDuration(end - Date.parse(startedAt));
  };
}

const STATUS_LABEL = { running: 'running', done: 'done', failed: 'failed', cancelled: 'cancelled' } as const;

/**
 * A tool call as a card: what it does, how it is going, what it returned. Edits and writes show
 * their diff, shell commands a terminal block; a long output is collapsed. A `task` call holds its
 * subagent's work.
 */
export function ToolCard(props: {
  call: TranscriptToolCall;
  waiting?: boolean;
  /** Draws a subagent's items, given as an accessor: the view is made once and follows them. */
  renderItems?: (items: () => TranscriptItem[]) => unknown;
}) {
  const elapsed = useElapsed(() => props.call);
  const change = createMemo(() => fileChangeOf(props.call.toolName, props.call.args));
  const [open, setOpen] = createSignal(false);
  const showBody = () =>
    open() ||
    props.waiting === true ||
    change() !== undefined ||
    props.call.diff !== undefined ||
    props.call.toolName === 'task';
  return (
    <div
      class={`tool-card status-${props.call.status}${props.waiting === true ? ' waiting' : ''}`}
      data-testid="tool-card"
      data-tool={props.call.toolName}
      data-status={props.call.status}
    >
      <button type="button" class="tool-head" onClick={() => setOpen(!open())} aria-expanded={showBody()}>
        <span class="tool-icon" aria-hidden="true">
          {props.call.status === 'running'
            ? '◌'
            : props.call.status === 'done'
              ? '✓'
              : props.call.status === 'failed'
                ? '✗'
                : '–'}
        </span>
        <span class="tool-name">{props.call.toolName}</span>
        <code class="tool-subject">{callSubject(props.call.toolName, props.call.args)}</code>
        <span class="tool-meta">
          {props.waiting === true ? 'waiting for approval' : STATUS_LABEL[props.call.status]}
          <Show when={elapsed()}>{(time) => <> · {time()}</>}</Show>
        </span>
      </button>
      <Show when={showBody()}>
        <div class="tool-body">
          <Switch
            fallback={
              <Show when={!subjectSaysAll(props.call.toolName, props.call.args)}>
                <LongText text={JSON.stringify(props.call.args, null, 2)} class="args" label="arguments" />
              </Show>
            }
          >
            {/* The worker's diff of what the call wrote, once it ended; before that, the arguments'. */}
            <Match when={props.call.diff}>
              {(diff) => (
                <UnifiedDiffView
                  path={String(props.call.args.path ?? '')}
                  diff={diff()}
                  kind={props.call.toolName === 'write_file' ? 'write' : 'edit'}
                />
              )}
            </Match>
            <Match when={change()}>{(fileChange) => <DiffView change={fileChange()} />}</Match>
            <Match when={props.call.toolName === 'shell_exec'}>
              <div class="terminal-command">
                <span aria-hidden="true">$ </span>
                {String(props.call.args.command ?? '')}
              </div>
            </Match>
          </Switch>
          <Show
            when={
              props.call.toolName === 'task' && props.call.subagent === undefined && props.call.status !== 'running'
            }
          >
            <SubagentHistory toolCallId={props.call.toolCallId} render={(items) => props.renderItems?.(items)} />
          </Show>
          <Show when={props.call.subagent}>
            {(subagent) => (
              <div class="subagent" data-testid="subagent">
                <div class="subagent-head">subagent {subagent().agent}</div>
                {props.renderItems?.(() => subagent().items) as never}
              </div>
            )}
          </Show>
          <ToolResult call={props.call} />
        </div>
      </Show>
    </div>
  );
}

function ToolResult(props: { call: TranscriptToolCall }) {
  const isShell = () => props.call.toolName === 'shell_exec';
  return (
    <>
      <Show when={props.call.error}>
        {(error) => (
          <div class="tool-error" role="status">
            {props.call.errorKind === undefined ? '' : `${props.call.errorKind}: `}
            {error()}
          </div>
        )}
      </Show>
      <Show when={props.call.output !== undefined && props.call.output !== ''}>
        <LongText text={props.call.output ?? ''} class={isShell() ? 'terminal' : ''} label="output" />
      </Show>
      <Show when={props.call.truncated === true}>
        <div class="muted small">The output was cut for the model: it saw the start and the end.</div>
      </Show>
      <Show when={props.call.fullOutput}>
        {(fullOutput) => (
          <FullOutput toolCallId={props.call.toolCallId} fullOutput={fullOutput()} terminal={isShell()} />
        )}
      </Show>
      <Show when={props.call.attachments !== undefined && props.call.attachments.length > 0}>
        <div class="attachments">
          <For each={props.call.attachments}>{(attachment) => <AttachmentView attachment={attachment} />}</For>
        </div>
      </Show>
    </>
  );
}
