import { writeFile } from 'node:fs/promises';
import { createSilentLogger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openCredentialStore } from '../auth/credential-store.ts';
import { createTempDir } from '../testing/test-link.ts';
import { authenticateConnection } from './authenticate-connection.ts';

const CLIENT_TOKEN = 'molf_c_fixed-client-token-0123456789';
const WORKER_TOKEN = 'molf_w_fixed-worker-token-0123456789';
const logger = createSilentLogger();

async function openStore() {
  const data = await createTempDir();
  const credentials = openCredentialStore({
    dataDir: data.path,
    fixed: { client: CLIENT_TOKEN, worker: WORKER_TOKEN },
  });
  return { credentials, data, [Symbol.asyncDispose]: () => data[Symbol.asyncDispose]() };
}

/** The error `authenticateConnection` throws for these params, which the test requires it to throw. */
function refusal(options: Omit<Parameters<typeof authenticateConnection>[0], 'logger' | 'remoteAddress'>): MolfError {
  try {
    authenticateConnection({ ...options, logger, remoteAddress: '127.0.0.1' });
  } catch (error) {
    if (error instanceof MolfError) return error;
    throw error;
  }
  throw new Error('the connection was let in');
}

describe('authenticateConnection', () => {
  it('gives a client token the client role and a worker token the worker role', async () => {
    await using store = await openStore();
    const { credentials } = store;
    const stored = await credentials.create({ role: 'worker', label: 'laptop' });
    const check = (token: string) =>
      authenticateConnection({ credentials, logger, connectionParams: { token }, remoteAddress: '127.0.0.1' });

    expect(check(CLIENT_TOKEN)).toEqual({ role: 'admin', credentialId: 'fixed-client' });
    expect(check(WORKER_TOKEN)).toEqual({ role: 'worker', credentialId: 'fixed-worker' });
    expect(check(stored.token)).toEqual({ role: 'worker', credentialId: stored.credential.id });
  });

  it('keeps the client program a connection names, and refuses a name with control characters even with a good token', async () => {
    await using store = await openStore();
    const { credentials } = store;
    expect(
      authenticateConnection({
        credentials,
        logger,
        connectionParams: { token: CLIENT_TOKEN, client: 'molf-web/0.1.0' },
        remoteAddress: '127.0.0.1',
      }),
    ).toEqual({ role: 'admin', credentialId: 'fixed-client', client: 'molf-web/0.1.0' });
    for (const client of ['molf-cli\n{"decision":"approved"}', 'x'.repeat(101), '']) {
      expect(refusal({ credentials, connectionParams: { token: CLIENT_TOKEN, client } })).toMatchObject({
        code: 'invalid_input',
        field: 'client',
        message: expect.stringContaining('invalid client name'),
      });
    }
    // A missing token is still that, whatever else is wrong.
    expect(refusal({ credentials, connectionParams: { client: 'x'.repeat(101) } })).toMatchObject({
      code: 'unauthorized',
    });
  });

  it('refuses a connection without a token as unauthorized, saying how to send one', async () => {
    await using store = await openStore();
    for (const connectionParams of [undefined, null, {}, { token: '' }, { token: 7 }]) {
      const error = refusal({ credentials: store.credentials, connectionParams });
      expect(error, JSON.stringify(connectionParams)).toMatchObject({
        code: 'unauthorized',
        message: 'no token: connect with a client or worker token in the connection params',
      });
    }
  });

  it('refuses an unknown token as unauthorized, naming the role its prefix claims', async () => {
    await using store = await openStore();
    const claimsClient = refusal({
      credentials: store.credentials,
      connectionParams: { token: 'molf_c_unknown-0123456789' },
    });
    const claimsNothing = refusal({ credentials: store.credentials, connectionParams: { token: 'not-a-molf-token' } });
    expect(claimsClient).toMatchObject({
      code: 'unauthorized',
      message: 'invalid token: this server does not know that client token',
    });
    expect(claimsNothing).toMatchObject({
      code: 'unauthorized',
      message: 'invalid token: this server does not know that token',
    });
  });

  it('refuses every stored token as an internal error, with the reason, when the credentials file is broken', async () => {
    await using store = await openStore();
    const stored = await store.credentials.create({ role: 'admin', label: 'laptop' });
    await writeFile(store.credentials.path, '{ "version": 1, "credentials": [ broken');

    const error = refusal({ credentials: store.credentials, connectionParams: { token: stored.token } });

    expect(error.code).toBe('internal');
    expect(error.message).toContain(`${store.credentials.path} is not valid JSON`);
    expect(error.cause).toMatchObject({ code: 'config_invalid' });
    // Fixed tokens don't depend on the file: `molf up` is never locked out by it.
    expect(
      authenticateConnection({
        credentials: store.credentials,
        logger,
        connectionParams: { token: CLIENT_TOKEN },
        remoteAddress: undefined,
      }),
    ).toMatchObject({ role: 'admin' });
  });

  it('refuses a valid token on a socket the guard no longer admits, and asks it with the credential id', async () => {
    await using store = await openStore();
    const asked: string[] = [];
    const error = refusal({
      credentials: store.credentials,
      connectionParams: { token: WORKER_TOKEN },
      admit: (credentialId) => {
        asked.push(credentialId);
        return false;
      },
    });
    expect(error).toMatchObject({
      code: 'unauthorized',
      message: 'this connection was refused before it authenticated',
    });
    expect(asked).toEqual(['fixed-worker']);
  });
});
