import type { WorkerInfo } from '@molf/protocol';
import { For, Show } from 'solid-js';

/** What a worker offers: its tools, its skills and agents, and what is wrong with them. */
export function WorkerDetails(props: { worker: WorkerInfo }) {
  const catalog = () => props.worker.catalog;
  // Servers that older workers do not report: every tool then counts as built-in.
  const builtin = () => props.worker.builtinTools ?? props.worker.tools;
  return (
    <div class="worker-details" data-testid="worker-details">
      <div class="muted small">
        <code>{props.worker.workdir}</code> · v{props.worker.version}
        <Show when={props.worker.sandbox}>
          {(sandbox) => (
            <>
              {' '}
              · sandbox {sandbox().active ? 'on' : 'off'}
              {sandbox().active && !sandbox().network ? ', no network' : ''}
            </>
          )}
        </Show>
      </div>
      <details>
        <summary>{builtin().length} built-in tools</summary>
        <ul class="chips">
          <For each={builtin()}>{(tool) => <li>{tool}</li>}</For>
        </ul>
      </details>
      <Show when={(props.worker.mcpServers?.length ?? 0) > 0}>
        <details open data-testid="mcp-servers">
          <summary>{props.worker.mcpServers?.length} MCP servers</summary>
          <ul class="plain">
            <For each={props.worker.mcpServers}>
              {(server) => (
                <li class="mcp-server" data-testid="mcp-server" data-status={server.status}>
                  <span
                    class={`status-dot ${server.status === 'connected' ? 'online' : server.status === 'connecting' ? 'busy' : 'offline'}`}
                  />
                  <strong>{server.name}</strong> <span class="muted">{server.status.replace('_', ' ')}</span>
                  <Show when={server.reason}>{(reason) => <div class="warn-text small">{reason()}</div>}</Show>
                  <Show when={server.tools.length > 0}>
                    <ul class="chips">
                      <For each={server.tools}>{(tool) => <li>{tool}</li>}</For>
                    </ul>
                  </Show>
                </li>
              )}
            </For>
          </ul>
        </details>
      </Show>
      <Show when={(catalog()?.skills.length ?? 0) > 0}>
        <details>
          <summary>{catalog()?.skills.length} skills</summary>
          <ul class="plain">
            <For each={catalog()?.skills}>
              {(skill) => (
                <li>
                  <strong>{skill.name}</strong> <span class="muted">{skill.description}</span>
                </li>
              )}
            </For>
          </ul>
        </details>
      </Show>
      <Show when={(catalog()?.agents.length ?? 0) > 0}>
        <details>
          <summary>{catalog()?.agents.length} agents</summary>
          <ul class="plain">
            <For each={catalog()?.agents}>
              {(agent) => (
                <li>
                  <strong>{agent.name}</strong>
                  {agent.builtin ? <span class="muted"> (built-in)</span> : null}{' '}
                  <span class="muted">{agent.description}</span>
                </li>
              )}
            </For>
          </ul>
        </details>
      </Show>
      <Show when={(catalog()?.problems.length ?? 0) > 0}>
        <details open>
          <summary class="warn-text">{catalog()?.problems.length} problems</summary>
          <ul class="plain">
            <For each={catalog()?.problems}>
              {(problem) => (
                <li class="small">
                  {problem.severity}: <code>{problem.path}</code> {problem.message}
                </li>
              )}
            </For>
          </ul>
        </details>
      </Show>
    </div>
  );
}
