/**
 * Trades a pairing code (`molf pair --role operator|viewer|admin` on the server) for a client token,
 * from this page's own origin (`POST /api/pair`): the browser has already verified the server's
 * certificate for the page itself. Rejects with the server's sentence (a wrong, expired or used
 * code; a worker's code; too many tries).
 */
export async function redeemCode(code: string, name: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch('/api/pair', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, kind: 'client', name }),
    });
  } catch {
    throw new Error('The server cannot be reached: is it running?');
  }
  const body = (await response.json().catch(() => undefined)) as
    | { token?: unknown; error?: { message?: unknown } }
    | undefined;
  if (response.ok && typeof body?.token === 'string') return body.token;
  const message = typeof body?.error?.message === 'string' ? body.error.message : `HTTP ${response.status}`;
  const wait = response.headers.get('retry-after');
  throw new Error(`${message}${response.status === 429 && wait !== null ? ` (try again in ${wait} s)` : ''}`);
}

/** A name for this browser's credential, as `molf token list` will show it: the browser and its system. */
export function browserCredentialName(): string {
  const agent = navigator.userAgent;
  const browser = /Firefox\//.test(agent)
    ? 'Firefox'
    : /Edg\//.test(agent)
      ? 'Edge'
      : /Chrome\//.test(agent)
        ? 'Chrome'
        : /Safari\//.test(agent)
          ? 'Safari'
          : 'browser';
  const system = /Windows/.test(agent)
    ? 'Windows'
    : /Mac OS X/.test(agent)
      ? 'macOS'
      : /Android/.test(agent)
        ? 'Android'
        : /Linux/.test(agent)
          ? 'Linux'
          : undefined;
  return system === undefined ? `${browser} (web)` : `${browser} on ${system} (web)`;
}
