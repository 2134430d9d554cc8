import { Match, Switch } from 'solid-js';
import type { LinkState } from './server-link.ts';

/** The link's state, always in sight: a lost link is said at once, with what the page does about it. */
export function LinkBanner(props: { state: LinkState }) {
  return (
    <span class="link-state" data-testid="link-state" data-state={props.state.type} role="status">
      <Switch>
        <Match when={props.state.type === 'connected'}>
          <span class="status-dot online" /> connected
        </Match>
        <Match when={props.state.type === 'connecting'}>
          <span class="status-dot" /> connecting…
        </Match>
        <Match when={props.state.type === 'reconnecting'}>
          <span class="banner-warn">
            <span class="status-dot offline" /> The server is unreachable: reconnecting… (nothing is lost; the page
            catches up)
          </span>
        </Match>
        <Match when={props.state.type === 'refused'}>
          <span class="banner-warn">refused</span>
        </Match>
      </Switch>
    </span>
  );
}
