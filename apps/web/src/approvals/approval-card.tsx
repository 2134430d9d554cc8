import type { Approval } from '@molf/protocol';
import { createSignal, For, type JSX, onCleanup, onMount, Show } from 'solid-js';
import type { Rights } from '../auth/rights.ts';
import { DiffView } from '../chat/diff-view.tsx';
import { fileChangeOf } from '../chat/file-change.ts';
import { UnifiedDiffView } from '../chat/unified-diff-view.tsx';
import { errorMessage } from '../link/rpc-error.ts';
import type { ApprovalChoice } from './approvals-store.ts';

/** How long an "always" answer lasts. */
type GrantLength = 'hour' | 'day' | 'permanent';

/** The end of a time-limited grant: an hour from now, or the end of the person's local day. */
export function grantExpiry(length: GrantLength, now = new Date()): string | undefined {
  if (length === 'permanent') return undefined;
  if (length === 'hour') return new Date(now.getTime() + 60 * 60_000).toISOString();
  const end = new Date(now);
  end.setHours(23, 59, 59, 999);
  return end.toISOString();
}

/** What the person answers with a key: y once, s this session, a always, e accept edits, n deny. */
const KEYS: Record<string, 'once' | 'session' | 'always' | 'edits' | 'deny'> = {
  y: 'once',
  s: 'session',
  a: 'always',
  e: 'edits',
  n: 'deny',
};

/**
 * A tool call waiting for the person: the exact subject (the shell line, the canonical path), the
 * rule that asked, the diff of an edit (the worker's, against the file, when the approval carries
 * it; else one read from the arguments), and the answers — once, this session, always (with the
 * exact patterns that would be saved, editable, and how long they last; for a destructive command
 * the server's note on why they are only the exact command), accept edits for this session (an
 * edit or a write), or deny with a reason.
 * Keys y / s / a / e / n answer the card that has the keyboard (`keyboard`). A viewer sees the
 * question without answers; an operator sees no "always" (it saves a rule: an admin's).
 */
export function ApprovalCard(props: {
  approval: Approval;
  sessionName?: string;
  keyboard: boolean;
  /** What this credential may answer. */
  rights: Rights;
  onAnswer: (choice: ApprovalChoice) => Promise<unknown>;
}) {
  const [mode, setMode] = createSignal<'choose' | 'always' | 'deny'>('choose');
  const [patterns, setPatterns] = createSignal((props.approval.alwaysPatterns ?? []).join('\n'));
  const [length, setLength] = createSignal<GrantLength>('permanent');
  const [feedback, setFeedback] = createSignal('');
  const [busy, setBusy] = createSignal(false);
  const [failure, setFailure] = createSignal<string>();
  const change = () => fileChangeOf(props.approval.tool, props.approval.args);
  const offersPatterns = () => props.approval.alwaysPatterns !== null;

  const send = async (choice: ApprovalChoice) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await props.onAnswer(choice);
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  };
  const edited = () =>
    patterns()
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
  const saveAlways = () => {
    const expiresAt = grantExpiry(length());
    void send({
      type: 'approve',
      scope: 'always',
      patterns: edited(),
      ...(expiresAt === undefined ? {} : { expiresAt }),
    });
  };

  const onKey = (event: KeyboardEvent) => {
    if (!props.keyboard || !props.rights.operate || busy() || mode() !== 'choose') return;
    const target = event.target as HTMLElement | null;
    if (target !== null && (target.tagName === 'TEXTAREA' || target.tagName === 'INPUT' || target.isContentEditable))
      return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const action = KEYS[event.key.toLowerCase()];
    if (action === undefined) return;
    if ((action === 'session' || action === 'always') && !offersPatterns()) return;
    if (action === 'edits' && props.approval.offersAcceptEdits !== true) return;
    if (action === 'always' && !props.rights.administer) return;
    event.preventDefault();
    if (action === 'deny') setMode('deny');
    else if (action === 'always') setMode('always');
    else void send({ type: 'approve', scope: action });
  };
  let card: HTMLElement | undefined;
  onMount(() => {
    window.addEventListener('keydown', onKey);
    // The card takes the keyboard unless the person is writing something (a draft is not lost).
    const focused = document.activeElement as HTMLInputElement | HTMLTextAreaElement | null;
    const writing =
      focused !== null && (focused.tagName === 'TEXTAREA' || focused.tagName === 'INPUT') && focused.value !== '';
    if (props.keyboard && !writing) card?.focus();
  });
  onCleanup(() => window.removeEventListener('keydown', onKey));

  return (
    <section
      ref={card}
      tabIndex={-1}
      class="approval-card"
      role="alertdialog"
      aria-label={`approve ${props.approval.tool}`}
      data-testid="approval"
    >
      <header class="approval-head">
        <strong>{props.approval.tool}</strong> wants to run
        <Show when={props.sessionName}>{(name) => <span class="muted"> in {name()}</span>}</Show>
        <Show when={props.approval.subagent}>
          {(subagent) => <span class="muted"> (subagent {subagent().agent})</span>}
        </Show>
      </header>
      <ul class="approval-subjects">
        <For each={props.approval.subjects}>
          {(subject) => (
            <li>
              <code class="approval-subject" data-testid="approval-subject">
                {subject.label}
              </code>
              <span class={`decision decision-${subject.decision}`}>{subject.decision}</span>
              <Show when={subject.rule}>{(rule) => <span class="muted"> by rule {rule()}</span>}</Show>
            </li>
          )}
        </For>
      </ul>
      <Show when={props.approval.subjects.every((subject) => subject.rule === undefined)}>
        <div class="approval-reason muted">{props.approval.reason}</div>
      </Show>
      <Show
        when={props.approval.preview}
        fallback={<Show when={change()}>{(fileChange) => <DiffView change={fileChange()} />}</Show>}
      >
        {(preview) => (
          <UnifiedDiffView
            path={preview().path}
            diff={preview()}
            kind={props.approval.tool === 'write_file' ? 'write' : 'edit'}
          />
        )}
      </Show>
      {/* Why "This session" / "Always" offer only the exact command (or are missing): a destructive command. */}
      <Show when={props.approval.alwaysNote}>
        {(note) => (
          <p class="approval-note" data-testid="always-note">
            {note()}
          </p>
        )}
      </Show>

      <Show when={mode() === 'choose' && !props.rights.operate}>
        <p class="muted small" data-testid="approval-read-only">
          Read-only (viewer credential): an operator or admin can answer.
        </p>
      </Show>
      <Show when={mode() === 'choose' && props.rights.operate}>
        <div class="approval-actions">
          <button
            type="button"
            class="primary"
            disabled={busy()}
            onClick={() => void send({ type: 'approve', scope: 'once' })}
          >
            <kbd>y</kbd> Allow once
          </button>
          <Show when={offersPatterns()}>
            <button type="button" disabled={busy()} onClick={() => void send({ type: 'approve', scope: 'session' })}>
              <kbd>s</kbd> This session
            </button>
            <Show
              when={props.rights.administer}
              fallback={
                <span class="muted small" data-testid="always-needs-admin">
                  “Always” saves a rule: an admin can.
                </span>
              }
            >
              <button type="button" disabled={busy()} onClick={() => setMode('always')}>
                <kbd>a</kbd> Always…
              </button>
            </Show>
          </Show>
          <Show when={props.approval.offersAcceptEdits === true}>
            <button type="button" disabled={busy()} onClick={() => void send({ type: 'approve', scope: 'edits' })}>
              <kbd>e</kbd> Accept edits for this session
            </button>
          </Show>
          <button type="button" class="danger" disabled={busy()} onClick={() => setMode('deny')}>
            <kbd>n</kbd> Deny…
          </button>
        </div>
      </Show>

      <Show when={mode() === 'always'}>
        <AnswerForm
          submit="Save and allow"
          submitClass="primary"
          disabled={busy() || edited().length === 0}
          onSubmit={saveAlways}
          onBack={() => setMode('choose')}
        >
          <label>
            Allow rules to save for {props.approval.tool} (one pattern per line)
            <textarea
              data-testid="always-patterns"
              rows={Math.max(2, edited().length)}
              value={patterns()}
              onInput={(event) => setPatterns(event.currentTarget.value)}
              ref={(element) => queueMicrotask(() => element.focus())}
            />
          </label>
          <fieldset class="grant-length">
            <legend>For how long</legend>
            <For
              each={
                [
                  ['hour', 'this hour'],
                  ['day', 'today'],
                  ['permanent', 'permanently'],
                ] as const
              }
            >
              {([value, label]) => (
                <label>
                  <input
                    type="radio"
                    name={`length-${props.approval.approvalId}`}
                    checked={length() === value}
                    onChange={() => setLength(value)}
                  />
                  {label}
                </label>
              )}
            </For>
          </fieldset>
        </AnswerForm>
      </Show>

      <Show when={mode() === 'deny'}>
        <AnswerForm
          submit="Deny"
          submitClass="danger"
          disabled={busy()}
          onSubmit={() => void send({ type: 'deny', feedback: feedback() })}
          onBack={() => setMode('choose')}
        >
          <label>
            Why (the model reads this)
            <input
              data-testid="deny-reason"
              value={feedback()}
              onInput={(event) => setFeedback(event.currentTarget.value)}
              ref={(element) => queueMicrotask(() => element.focus())}
            />
          </label>
        </AnswerForm>
      </Show>
      <Show when={failure()}>
        {(text) => (
          <div class="tool-error" role="alert">
            {text()}
          </div>
        )}
      </Show>
    </section>
  );
}

/** The second step of an answer ("Always…", "Deny…"): its fields, the answer's button and Back. */
function AnswerForm(props: {
  submit: string;
  submitClass: 'primary' | 'danger';
  disabled: boolean;
  onSubmit: () => void;
  onBack: () => void;
  children: JSX.Element;
}) {
  return (
    <form
      class="approval-form"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
      <div class="approval-actions">
        <button type="submit" class={props.submitClass} disabled={props.disabled}>
          {props.submit}
        </button>
        <button type="button" onClick={() => props.onBack()}>
          Back
        </button>
      </div>
    </form>
  );
}
