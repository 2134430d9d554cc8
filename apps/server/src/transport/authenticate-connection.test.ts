import { writeFile } from 'node:fs/promises';
import { createSilentLogger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openCredentialStore } from '../auth/credential-store.ts';
import { openFileStateDocuments } from '../state/index.ts';
import { backendTitle, stateBackends } from '../testing/state-backends.ts';
import { createTempDir, waitFor } from '../testing/test-link.ts';
import { authenticateConnection } from './authenticate-connection.ts';

const CLIENT_TOKEN = 'molf_c_fixed-client-token-0123456789';
const WORKER_TOKEN = 'molf_w_fixed-worker-token-0123456789';
const logger = createSilentLogger();

async function openStore() {
  const data = await createTempDir();
  const credentials = openCredentialStore({
    documents: openFileStateDocuments({ dataDir: data.path }),
    fixed: { client: CLIENT_TOKEN, worker: WORKER_TOKEN },
  });
  return { credentials, data, [Symbol.asyncDispose]: () => data[Symbol.asyncDispose]() };
}

/** The error `authenticateConnection` throws for these params, which the test requires it to throw. */
async function refusal(
  options: Omit<Parameters<typeof authenticateConnection>[0], 'logger' | 'remoteAddress'>,
): Promise<MolfError> {
  try {
    await authenticateConnection({ ...options, logger, remoteAddress: '127.0.0.1' });
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

    expect(await check(CLIENT_TOKEN)).toEqual({ role: 'admin', credentialId: 'fixed-client' });
    expect(await check(WORKER_TOKEN)).toEqual({ role: 'worker', credentialId: 'fixed-worker' });
    expect(await check(stored.token)).toEqual({ role: 'worker', credentialId: stored.credential.id });
  });

  it('keeps the client program a connection names, and refuses a name with control characters even with a good token', async () => {
    await using store = await openStore();
    const { credentials } = store;
    expect(
      await authenticateConnection({
        credentials,
        logger,
        connectionParams: { token: CLIENT_TOKEN, client: 'molf-web/0.1.0' },
        remoteAddress: '127.0.0.1',
      }),
    ).toEqual({ role: 'admin', credentialId: 'fixed-client', client: 'molf-web/0.1.0' });
    for (const client of ['molf-cli\n{"decision":"approved"}', 'x'.repeat(101), '']) {
      expect(await refusal({ credentials, connectionParams: { token: CLIENT_TOKEN, client } })).toMatchObject({
        code: 'invalid_input',
        field: 'client',
        message: expect.stringContaining('invalid client name'),
      });
    }
    // A missing token is still that, whatever else is wrong.
    expect(await refusal({ credentials, connectionParams: { client: 'x'.repeat(101) } })).toMatchObject({
      code: 'unauthorized',
    });
  });

  it('refuses a connection without a token as unauthorized, saying how to send one', async () => {
    await using store = await openStore();
    for (const connectionParams of [undefined, null, {}, { token: '' }, { token: 7 }]) {
      const error = await refusal({ credentials: store.credentials, connectionParams });
      expect(error, JSON.stringify(connectionParams)).toMatchObject({
        code: 'unauthorized',
        message: 'no token: connect with a client or worker token in the connection params',
      });
    }
  });

  it('refuses an unknown token as unauthorized, naming the role its prefix claims', async () => {
    await using store = await openStore();
    const claimsClient = await refusal({
      credentials: store.credentials,
      connectionParams: { token: 'molf_c_unknown-0123456789' },
    });
    const claimsNothing = await refusal({
      credentials: store.credentials,
      connectionParams: { token: 'not-a-molf-token' },
    });
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
    await writeFile(store.credentials.where, '{ "version": 1, "credentials": [ broken');

    const error = await refusal({ credentials: store.credentials, connectionParams: { token: stored.token } });

    expect(error.code).toBe('internal');
    expect(error.message).toContain(`${store.credentials.where} is not valid JSON`);
    expect(error.cause).toMatchObject({ code: 'config_invalid' });
    // Fixed tokens don't depend on the file: `molf up` is never locked out by it.
    expect(
      await authenticateConnection({
        credentials: store.credentials,
        logger,
        connectionParams: { token: CLIENT_TOKEN },
        remoteAddress: undefined,
      }),
    ).toMatchObject({ role: 'admin' });
  });

  it('admits a token the credentials know before it first waits, so the caller raises the socket limit before reading on', async () => {
    await using store = await openStore();
    const stored = await store.credentials.create({ role: 'viewer', label: 'wall' });
    const admitted: string[] = [];
    const pending = authenticateConnection({
      credentials: store.credentials,
      logger,
      connectionParams: { token: stored.token },
      remoteAddress: undefined,
      admit: (credentialId) => {
        admitted.push(credentialId);
        return true;
      },
    });
    expect(admitted).toEqual([stored.credential.id]);
    await expect(pending).resolves.toMatchObject({ role: 'viewer' });
  });

  it('refuses a valid token on a socket the guard no longer admits, and asks it with the credential id', async () => {
    await using store = await openStore();
    const asked: string[] = [];
    const error = await refusal({
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

for (const backend of stateBackends()) {
  describe.skipIf(backend.unavailable !== undefined)(backendTitle('authenticateConnection', backend), () => {
    it('lets in a token made by another process or instance as soon as it was made', async () => {
      await using place = await backend.prepare();
      const here = openCredentialStore({ documents: (await place.open()).documents });
      const elsewhere = openCredentialStore({ documents: (await place.open()).documents });
      // Many times: on PostgreSQL the announcement of each new one races the check.
      for (let index = 0; index < 20; index += 1) {
        const { token, credential } = await elsewhere.create({ role: 'operator', label: `laptop ${index}` });
        expect(
          await authenticateConnection({
            credentials: here,
            logger,
            connectionParams: { token },
            remoteAddress: undefined,
          }),
        ).toEqual({ role: 'operator', credentialId: credential.id });
      }
    });

    it('refuses a token revoked by another process or instance once the change is known', async () => {
      await using place = await backend.prepare();
      const here = openCredentialStore({ documents: (await place.open()).documents });
      const elsewhere = openCredentialStore({ documents: (await place.open()).documents });
      const { token, credential } = await elsewhere.create({ role: 'operator', label: 'laptop' });
      await elsewhere.revoke(credential.id);
      await waitFor(() => !here.isActive(credential.id), { what: 'the revocation to be known' });
      expect(await refusal({ credentials: here, connectionParams: { token } })).toMatchObject({ code: 'unauthorized' });
    });
  });
}
