import { MolfError } from '@molf/protocol';
import { findConnection } from './connection-store.ts';

export type ClientConnectionOptions = { server?: string; token?: string };

/**
 * Where client commands connect: flags, then env (`MOLF_SERVER_URL`, `MOLF_CLIENT_TOKEN`, read by
 * the options), then what `molf up` saved for this directory or its nearest ancestor.
 */
export async function resolveClientConnection(
  options: ClientConnectionOptions,
  cwd: string = process.cwd(),
): Promise<{ url: string; token: string }> {
  const saved = options.server !== undefined && options.token !== undefined ? undefined : await findConnection(cwd);
  const url = options.server ?? saved?.url ?? 'ws://127.0.0.1:7600';
  const token = options.token ?? (saved !== undefined && saved.url === url ? saved.token : undefined);
  if (token === undefined || token === '') {
    throw new MolfError(
      'unauthorized',
      'no client token: run `molf up` in this project first, or pass --token / set MOLF_CLIENT_TOKEN',
    );
  }
  return { url, token };
}
