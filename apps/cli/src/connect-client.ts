import { createMolfClient, type MolfClient, type MolfClientOptions } from '@molf/client';

/** How often a client command retries a server it cannot reach, while `ready()` waits. */
const CLIENT_RETRY_MS = 250;

/**
 * A client of `url` whose credential the server has accepted. When the server can't be reached
 * (or refuses the token) the client is closed before the error is thrown: its reconnect timer
 * would otherwise keep the process alive after the command has failed.
 */
export async function connectClient(
  options: Pick<MolfClientOptions, 'url' | 'token' | 'onStatus'> & {
    /** How long to wait for the server to answer. Default: `ready()`'s (5 s). */
    timeoutMs?: number;
  },
): Promise<MolfClient> {
  const client = createMolfClient({
    url: options.url,
    token: options.token,
    retryDelayMs: () => CLIENT_RETRY_MS,
    ...(options.onStatus === undefined ? {} : { onStatus: options.onStatus }),
  });
  try {
    await client.ready(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
    return client;
  } catch (error) {
    await client.close();
    throw error;
  }
}
