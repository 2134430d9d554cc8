import type { PermissionExplanation, PermissionsFileInfo } from '@molf/protocol';
import { createResource, createSignal, For, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import type { ServerLink } from '../link/server-link.ts';
import { GrantsView } from './grants-view.tsx';

/** What the explain box asks about: a tool and the one argument that says what it touches. */
const SUBJECT_ARGUMENT: Record<string, string> = {
  shell_exec: 'command',
  read_file: 'path',
  write_file: 'path',
  edit_file: 'path',
  glob: 'pattern',
  grep: 'path',
};

/**
 * A worker's rules as the server holds them (read-only: the file is edited with `molf permissions
 * edit` or in an editor), and an explain box: a subject in, the decision and the rule that decides
 * out.
 */
export function PermissionsView(props: { link: ServerLink; workerId: string }) {
  const [file, { refetch }] = createResource<PermissionsFileInfo, string>(
    () => props.workerId,
    (workerId) => props.link.client.rpc.permissions.show.query({ workerId }),
  );
  const [tool, setTool] = createSignal('shell_exec');
  const [subject, setSubject] = createSignal('');
  const [answer, setAnswer] = createSignal<PermissionExplanation>();
  const [failure, setFailure] = createSignal<string>();

  const explain = async () => {
    setFailure(undefined);
    setAnswer(undefined);
    const key = SUBJECT_ARGUMENT[tool()] ?? 'name';
    const args: Record<string, unknown> = { [key]: subject() };
    if (tool() === 'write_file') args.content = '';
    if (tool() === 'grep') args.pattern = 'x';
    try {
      setAnswer(
        await props.link.client.rpc.permissions.explain.query({ workerId: props.workerId, tool: tool(), args }),
      );
    } catch (error) {
      setFailure(errorMessage(error));
    }
  };

  return (
    <div class="permissions-view" data-testid="permissions-view">
      <section>
        <h2>Explain a call</h2>
        <form
          class="explain-form"
          onSubmit={(event) => {
            event.preventDefault();
            void explain();
          }}
        >
          <select aria-label="tool" value={tool()} onChange={(event) => setTool(event.currentTarget.value)}>
            <For each={Object.keys(SUBJECT_ARGUMENT)}>{(name) => <option value={name}>{name}</option>}</For>
          </select>
          <input
            aria-label="subject"
            data-testid="explain-subject"
            placeholder={tool() === 'shell_exec' ? 'a shell line, e.g. git push --force' : 'a path, e.g. .env'}
            value={subject()}
            onInput={(event) => setSubject(event.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={subject().trim() === ''}>
            Explain
          </button>
        </form>
        <Show when={failure()}>{(message) => <div class="tool-error">{message()}</div>}</Show>
        <Show when={answer()}>
          {(result) => (
            <div class="explanation" data-testid="explanation">
              <div>
                <span class={`decision decision-${result().decision}`}>{result().decision}</span> {result().reason}
              </div>
              <ul class="plain">
                <For each={result().subjects}>
                  {(item) => (
                    <li>
                      <code>{item.label}</code> →{' '}
                      <span class={`decision decision-${item.decision}`}>{item.decision}</span>
                      <Show when={item.rule}>{(rule) => <span class="muted"> by {rule()}</span>}</Show>
                    </li>
                  )}
                </For>
              </ul>
              <For each={result().problems}>{(problem) => <div class="warn-text">{problem}</div>}</For>
            </div>
          )}
        </Show>
      </section>
      <GrantsView link={props.link} workerId={props.workerId} />
      <section>
        <div class="section-row">
          <h2>Rules</h2>
          <button type="button" onClick={() => void refetch()}>
            Reload
          </button>
        </div>
        <Show when={file.error}>{(error) => <div class="tool-error">{errorMessage(error())}</div>}</Show>
        <Show when={file()}>
          {(info) => (
            <>
              <p class="muted small">
                <code>{info().path}</code> — edit it with <code>molf permissions edit</code> or{' '}
                <a href={`vscode://file${info().path}`}>open it in VS Code</a>; the server applies a saved change at
                once.
              </p>
              <Show when={info().problem}>
                {(problem) => (
                  <div class="tool-error" role="alert">
                    The file does not parse (line {problem().line}, column {problem().column}: {problem().message}); the
                    gate uses{' '}
                    {problem().fallback === 'last_good_rules' ? 'the last good rules' : '“ask” for everything'}.
                  </div>
                )}
              </Show>
              <pre class="output rules" data-testid="rules-text">
                {info().text}
              </pre>
            </>
          )}
        </Show>
      </section>
    </div>
  );
}
