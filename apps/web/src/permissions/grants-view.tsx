import type { Grant } from '@molf/protocol';
import { createResource, createSignal, For, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import type { ServerLink } from '../link/server-link.ts';

function when(iso: string | undefined): string {
  return iso === undefined ? '—' : new Date(iso).toLocaleString();
}

/**
 * Every rule an "always" answer saved for the worker: what it allows, until when, who gave it, from
 * which client and for which call (from the audit trail). One click takes one back; an expired one
 * no longer applies and is shown as expired until it is revoked.
 */
export function GrantsView(props: { link: ServerLink; workerId: string }) {
  const [grants, { refetch }] = createResource(
    () => props.workerId,
    (workerId) => props.link.client.rpc.permissions.grants.query({ workerId }),
  );
  const [failure, setFailure] = createSignal<string>();
  const revoke = async (grant: Grant) => {
    if (!window.confirm(`Take back the grant "${grant.tool}: ${grant.pattern}"? The next such call asks again.`))
      return;
    setFailure(undefined);
    try {
      await props.link.client.rpc.permissions.revoke.mutate({ workerId: props.workerId, grantId: grant.grantId });
      await refetch();
    } catch (error) {
      setFailure(errorMessage(error));
    }
  };
  return (
    <section data-testid="grants">
      <div class="section-row">
        <h2>Grants</h2>
        <button type="button" onClick={() => void refetch()}>
          Reload
        </button>
      </div>
      <p class="muted small">
        Rules saved by “always” answers. Also in the CLI: <code>molf permissions grants</code>,{' '}
        <code>molf permissions revoke ID</code>.
      </p>
      <Show when={failure()}>{(message) => <div class="tool-error">{message()}</div>}</Show>
      <Show when={grants.error}>{(error) => <div class="tool-error">{errorMessage(error())}</div>}</Show>
      <Show when={grants()}>
        {(list) => (
          <Show when={list().grants.length > 0} fallback={<p class="muted">No grants yet.</p>}>
            <div class="table-scroll">
              <table class="grants-table">
                <thead>
                  <tr>
                    <th>Allows</th>
                    <th>Until</th>
                    <th>Given</th>
                    <th>For the call</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  <For each={list().grants}>
                    {(grant) => (
                      <tr classList={{ expired: grant.expired }} data-testid="grant" data-grant={grant.grantId}>
                        <td>
                          <span class="muted">{grant.tool}</span> <code>{grant.pattern}</code>
                          <Show when={grant.action !== 'allow'}>
                            <span class="muted"> ({grant.action})</span>
                          </Show>
                        </td>
                        <td>
                          <Show
                            when={grant.expired}
                            fallback={grant.expiresAt === undefined ? 'permanent' : when(grant.expiresAt)}
                          >
                            <span class="badge warn">expired</span> {when(grant.expiresAt)}
                          </Show>
                        </td>
                        <td>
                          {when(grant.givenAt)}
                          <div class="muted small">
                            {grant.givenBy?.label ?? grant.givenBy?.credentialId ?? 'by hand'}
                            {grant.client === undefined ? '' : ` · ${grant.client}`}
                          </div>
                        </td>
                        <td>
                          <For each={grant.subjects}>{(subject) => <code class="subject-chip">{subject}</code>}</For>
                        </td>
                        <td>
                          <Show
                            when={props.link.rights.administer}
                            fallback={
                              <span class="muted small" data-testid="revoke-needs-admin">
                                an admin can revoke
                              </span>
                            }
                          >
                            <button type="button" class="danger" onClick={() => void revoke(grant)}>
                              Revoke
                            </button>
                          </Show>
                        </td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
            </div>
          </Show>
        )}
      </Show>
    </section>
  );
}
