import type { ServerTrust } from '@molf/client/node';
import { MolfError } from '@molf/protocol';
import { findConnection } from './connection-store.ts';
import { askOnTerminal } from './remote/ask-on-terminal.ts';
import { resolveServerTrust } from './remote/resolve-server-trust.ts';
import { savedLogins } from './remote/saved-logins.ts';
import { serverKey } from './remote/server-key.ts';

export type ClientConnectionOptions = {
  server?: string;
  token?: string;
  /** A CA file for a `wss://` server (`MOLF_TLS_CA`). */
  tlsCa?: string;
  /** The SHA-256 the server's certificate must have, pinned on first use (`MOLF_SERVER_FINGERPRINT`). */
  fingerprint?: string;
};

export type ClientConnection = { url: string; token: string; trust?: ServerTrust };

/**
 * Where client commands connect and with what: flags, then env (`MOLF_SERVER_URL`,
 * `MOLF_CLIENT_TOKEN`, read by the options), then what `molf up` saved for this directory or its
 * nearest ancestor, then the default server of `molf login`. A `wss://` server is verified first
 * (a CA, its pinned certificate, the system's CAs, or the person's yes), so that the token is
 * never sent to another.
 */
export async function resolveClientConnection(
  options: ClientConnectionOptions,
  cwd: string = process.cwd(),
): Promise<ClientConnection> {
  const logins = savedLogins();
  const saved = options.server !== undefined && options.token !== undefined ? undefined : await findConnection(cwd);
  const fallback = options.server === undefined && saved === undefined ? await logins.defaultLogin() : undefined;
  const url = options.server ?? saved?.url ?? fallback?.url ?? 'ws://127.0.0.1:7600';
  const token =
    options.token ??
    (saved !== undefined && saved.url === url ? saved.token : undefined) ??
    (await loginToken(logins, url));
  if (token === undefined || token === '') {
    throw new MolfError(
      'unauthorized',
      `no client token for ${url}: run \`molf up\` in this project, \`molf login ${url} --pair CODE\`, ` +
        'or pass --token / set MOLF_CLIENT_TOKEN',
    );
  }
  const trust = await resolveServerTrust({
    url,
    caFile: options.tlsCa ?? process.env.MOLF_TLS_CA,
    fingerprint: options.fingerprint ?? process.env.MOLF_SERVER_FINGERPRINT,
    ask: askOnTerminal(),
    tell: (line) => process.stderr.write(`molf: ${line}\n`),
  });
  return trust === undefined ? { url, token } : { url, token, trust };
}

async function loginToken(logins: ReturnType<typeof savedLogins>, url: string): Promise<string | undefined> {
  try {
    serverKey(url);
  } catch {
    return undefined;
  }
  return (await logins.get(url))?.token;
}
