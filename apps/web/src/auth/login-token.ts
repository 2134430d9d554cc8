/**
 * The client token of this browser. `molf up` prints a link with the token in the URL fragment
 * (`/#token=…`): a fragment never reaches the server, its logs or a proxy. The page keeps the token
 * in this origin's local storage and drops the fragment from the address bar at once, so that it
 * stays out of the history, bookmarks and screen shares.
 */
const STORAGE_KEY = 'molf:token';

/** Takes the token out of the address bar, if the page was opened with one; returns it. */
export function takeTokenFromAddress(): string | undefined {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const token = fragment.get('token');
  if (token === null) return undefined;
  fragment.delete('token');
  const rest = fragment.toString();
  window.history.replaceState(
    window.history.state,
    '',
    `${window.location.pathname}${window.location.search}${rest === '' ? '' : `#${rest}`}`,
  );
  return token.trim() === '' ? undefined : token.trim();
}

export function storedToken(): string | undefined {
  try {
    return window.localStorage.getItem(STORAGE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function storeToken(token: string): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, token);
  } catch {
    // Storage may be off (private mode): the token then lasts as long as the page.
  }
}

export function forgetToken(): void {
  try {
    window.localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing was stored.
  }
}
