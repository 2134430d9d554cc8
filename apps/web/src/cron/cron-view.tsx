import { type CronJob, type CronLastRun, describeCronSchedule, formatUtcTime } from '@molf/protocol';
import { createMemo, createSignal, For, type JSX, Match, onCleanup, onMount, Show, Switch } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import type { ServerLink } from '../link/server-link.ts';
import type { CronStore } from './cron-store.ts';
import {
  describeCronJobState,
  describeCronOnAsk,
  describeCronOutcome,
  describeCronRuns,
  toCronJobState,
} from './describe-cron-job.ts';

/** How often the list is read again while the view is on screen: pauses and removals elsewhere send no event. */
const REFRESH_MS = 10_000;

/** How a "Run now" of this view went. */
type RunResult =
  | { type: 'ran'; outcome: CronLastRun['outcome']; reason?: string; sessionId?: string }
  | { type: 'error'; message: string };

/**
 * A worker's scheduled prompts (cron jobs): when each runs, how its last run went, where its runs
 * go and what they do when a call asks; pause, resume, run now and remove. Live: the store reads
 * the jobs again after each run the server tells of.
 */
export function CronView(props: {
  link: ServerLink;
  cron: CronStore;
  workerId: string;
  onOpenSession: (sessionId: string) => void;
}) {
  const jobs = createMemo(() => props.cron.jobs()?.filter((job) => job.workerId === props.workerId));
  const [results, setResults] = createSignal<Record<string, RunResult>>({});
  const [busy, setBusy] = createSignal<ReadonlySet<string>>(new Set());
  const [failure, setFailure] = createSignal<string>();

  onMount(() => void props.cron.refresh());
  const timer = setInterval(() => {
    if (document.visibilityState === 'visible' && props.link.state().type === 'connected') void props.cron.refresh();
  }, REFRESH_MS);
  onCleanup(() => clearInterval(timer));

  /** Runs one action of a job; its buttons are off meanwhile. */
  const act = async (jobId: string, action: () => Promise<void>) => {
    setFailure(undefined);
    setBusy((set) => new Set([...set, jobId]));
    try {
      await action();
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setBusy((set) => new Set([...set].filter((id) => id !== jobId)));
    }
  };
  const runNow = (job: CronJob) =>
    act(job.jobId, async () => {
      let result: RunResult;
      try {
        const after = await props.cron.runNow(job.jobId);
        const run = after.lastRun;
        result =
          run === undefined
            ? { type: 'error', message: 'the server told nothing of the run' }
            : {
                type: 'ran',
                outcome: run.outcome,
                ...(run.reason === undefined ? {} : { reason: run.reason }),
                ...(run.sessionId === undefined ? {} : { sessionId: run.sessionId }),
              };
      } catch (error) {
        result = { type: 'error', message: errorMessage(error) };
      }
      setResults((all) => ({ ...all, [job.jobId]: result }));
    });
  const remove = (job: CronJob) => {
    if (!window.confirm(`Remove the scheduled prompt "${job.name}"? It will not run again.`)) return;
    void act(job.jobId, () => props.cron.remove(job.jobId));
  };

  const sessionLink: SessionLink = (sessionId, label) => (
    <a
      href={`/s/${encodeURIComponent(sessionId)}`}
      data-testid="cron-session-link"
      onClick={(event) => {
        // A plain click opens it in a tab of this page; with a modifier, the browser's way.
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        props.onOpenSession(sessionId);
      }}
    >
      {label}
    </a>
  );

  return (
    <div class="cron-view" data-testid="cron-view">
      <div class="section-row">
        <h2>Scheduled prompts</h2>
        <button type="button" onClick={() => void props.cron.refresh()}>
          Reload
        </button>
      </div>
      <p class="muted small">
        Prompts a worker's sessions get on a schedule. Times are in UTC. Also in the CLI: <code>molf cron list</code>.
      </p>
      <Show when={failure()}>
        {(message) => (
          <div class="tool-error" role="alert">
            {message()}
          </div>
        )}
      </Show>
      <Show when={props.cron.error()}>{(message) => <div class="tool-error">{message()}</div>}</Show>
      <Show when={jobs()} fallback={<p class="muted">Reading…</p>}>
        {(list) => (
          <Show
            when={list().length > 0}
            fallback={
              <p class="empty-note" data-testid="cron-empty">
                No scheduled prompts on this worker. Ask the model, or run <code>molf cron add …</code>
              </p>
            }
          >
            <ul class="plain cron-jobs">
              {/* By id: a job read again updates its card (an open prompt stays open). */}
              <For each={list().map((job) => job.jobId)}>
                {(jobId) => (
                  <Show when={list().find((job) => job.jobId === jobId)}>
                    {(job) => (
                      <CronJobCard
                        job={job()}
                        busy={busy().has(jobId)}
                        result={results()[jobId]}
                        sessionLink={sessionLink}
                        operate={props.link.rights.operate}
                        onToggle={() => void act(jobId, () => props.cron.setEnabled(jobId, !job().enabled))}
                        onRun={() => void runNow(job())}
                        onRemove={() => remove(job())}
                      />
                    )}
                  </Show>
                )}
              </For>
            </ul>
          </Show>
        )}
      </Show>
    </div>
  );
}

type SessionLink = (sessionId: string, label: JSX.Element) => JSX.Element;

/** One job: its state, its buttons, when and where it runs, and how its last run went. */
function CronJobCard(props: {
  job: CronJob;
  busy: boolean;
  result: RunResult | undefined;
  sessionLink: SessionLink;
  /** Whether this credential may pause, run and remove jobs (an operator's); a viewer only reads. */
  operate: boolean;
  onToggle: () => void;
  onRun: () => void;
  onRemove: () => void;
}) {
  const state = () => toCronJobState(props.job);
  return (
    <li class="cron-job" data-testid="cron-job" data-job={props.job.jobId} data-state={state().type}>
      <div class="cron-job-head">
        <strong class="cron-job-name">{props.job.name}</strong>
        <span class={`badge cron-state-${state().type}`} data-testid="cron-state">
          {state().type}
        </span>
        <span class="spacer" />
        <Show when={props.operate}>
          <div class="cron-actions">
            <button type="button" data-testid="cron-toggle" disabled={props.busy} onClick={() => props.onToggle()}>
              {props.job.enabled ? 'Pause' : 'Resume'}
            </button>
            <button
              type="button"
              class="primary"
              data-testid="cron-run"
              disabled={props.busy}
              onClick={() => props.onRun()}
            >
              Run now
            </button>
            <button
              type="button"
              class="danger"
              data-testid="cron-remove"
              disabled={props.busy}
              onClick={() => props.onRemove()}
            >
              Remove
            </button>
          </div>
        </Show>
      </div>
      <Show when={state().type === 'failing' || state().type === 'done'}>
        <div
          classList={{ 'cron-warning': state().type === 'failing', 'muted small': state().type === 'done' }}
          role="status"
          data-testid="cron-state-text"
        >
          {state().type === 'failing' ? '⚠ ' : ''}
          {describeCronJobState(state())}
          <Show when={state().type === 'failing' && props.job.lastRun?.reason}>
            {(reason) => <div class="small">{reason()}</div>}
          </Show>
        </div>
      </Show>
      <dl class="cron-fields">
        <dt>Schedule</dt>
        <dd data-testid="cron-schedule">{describeCronSchedule(props.job.schedule)}</dd>
        <dt>Next run</dt>
        <dd data-testid="cron-next">
          <Show when={props.job.nextRunAt} fallback="—">
            {(next) => <time title={new Date(next()).toLocaleString()}>{formatUtcTime(next())}</time>}
          </Show>
        </dd>
        <dt>Last run</dt>
        <dd data-testid="cron-last-run">
          <Show when={props.job.lastRun} fallback="—">
            {(run) => (
              <>
                <time title={new Date(run().at).toLocaleString()}>{formatUtcTime(run().at)}</time>{' '}
                <span classList={{ 'warn-text': run().outcome === 'failed' }}>{describeCronOutcome(run())}</span>
                <Show when={props.job.target.type === 'new' && run().sessionId}>
                  {(sessionId) => <> · {props.sessionLink(sessionId(), 'its session')}</>}
                </Show>
              </>
            )}
          </Show>
        </dd>
        <dt>Runs</dt>
        <dd data-testid="cron-runs">{describeCronRuns(props.job)}</dd>
        <dt>Target</dt>
        <dd data-testid="cron-target">
          <Show when={props.job.target.type === 'session' && props.job.target} fallback="new session per run">
            {(target) => props.sessionLink(target().sessionId, <>session {target().sessionId}</>)}
          </Show>
        </dd>
        <dt>On ask</dt>
        <dd data-testid="cron-on-ask">{describeCronOnAsk(props.job)}</dd>
      </dl>
      <details class="cron-prompt">
        <summary>Prompt</summary>
        <pre class="output">{props.job.prompt}</pre>
      </details>
      <Show when={props.result}>{(result) => <RunResultView result={result()} sessionLink={props.sessionLink} />}</Show>
    </li>
  );
}

/** What "Run now" did: started or queued in a session (a link to it), or why it failed. */
function RunResultView(props: { result: RunResult; sessionLink: SessionLink }) {
  const ran = () => (props.result.type === 'ran' ? props.result : undefined);
  return (
    <div
      class="notice"
      classList={{
        'notice-error': props.result.type === 'error' || ran()?.outcome === 'failed',
        'notice-info': ran() !== undefined && ran()?.outcome !== 'failed',
      }}
      role="status"
      data-testid="cron-run-result"
      data-outcome={ran()?.outcome ?? 'error'}
    >
      <Switch>
        <Match when={props.result.type === 'error' && props.result}>
          {(result) => <>Run now failed: {result().message}</>}
        </Match>
        <Match when={ran()?.outcome === 'failed' && ran()}>
          {(result) => <>The run failed: {result().reason ?? 'no reason given'}</>}
        </Match>
        <Match when={ran()}>
          {(result) => (
            <>
              Run {describeCronOutcome(result())}
              <Show when={result().sessionId}>
                {(sessionId) => <> in {props.sessionLink(sessionId(), <>session {sessionId()}</>)}</>}
              </Show>
              .
            </>
          )}
        </Match>
      </Switch>
    </div>
  );
}
