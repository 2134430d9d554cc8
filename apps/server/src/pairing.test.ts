import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { createMolfClient, type MolfClient, redeemPairingCode } from '@molf/client/node';
import { describe, expect, it } from 'vitest';
import { PAIRING_CODES_FILE } from './pairing/index.ts';
import { createMemoryLogger } from './testing/memory-logger.ts';
import { createTempDir, startTestServer, TEST_CLIENT_TOKEN, waitFor } from './testing/test-link.ts';

/** A 200 has the credential's fields, a refusal `error`: typed as both, a test asserts which. */
type AnswerBody = {
  token: string;
  role: string;
  name: string;
  credentialId: string;
  error: { code: string; message: string; field?: string };
};
type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: AnswerBody };

/** A raw `POST /api/pair` (or another method), optionally from another loopback address. */
function post(
  httpUrl: string,
  body: unknown,
  options: { localAddress?: string; method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL('/api/pair', httpUrl),
      {
        method: options.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...options.headers },
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (response) => {
        let received = '';
        response.on('data', (chunk: Buffer) => {
          received += chunk.toString();
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(received) }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.method === 'GET' ? undefined : text);
  });
}

/** A code that is not `code` (whatever `code` is). */
function otherThan(code: string): string {
  return code === '0000-0000' ? '0000-0001' : '0000-0000';
}

async function startPairingServer(options: { credentialsPollMs?: number } = {}) {
  const data = await createTempDir();
  let now = Date.parse('2026-05-01T10:00:00Z');
  const { logger, lines } = await createMemoryLogger();
  const server = await startTestServer({ dataDir: data.path, now: () => now, logger, ...options });
  const admin = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
  await admin.ready();
  return {
    server,
    admin,
    lines,
    dataDir: data.path,
    advance(ms: number) {
      now += ms;
    },
    async [Symbol.asyncDispose]() {
      try {
        await admin.close();
        await server.close();
      } finally {
        await data[Symbol.asyncDispose]();
      }
    },
  };
}

async function connect(url: string, token: string): Promise<MolfClient> {
  const client = createMolfClient({ url, token });
  await client.ready();
  return client;
}

describe('POST /api/pair', () => {
  it('trades a worker code for a worker credential named by the code, and logs neither', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'worker', name: 'build-box' });
    expect(made.expiresAt).toBe('2026-05-01T10:05:00.000Z');

    const credential = await redeemPairingCode({
      url: stack.server.url,
      code: made.code.toLowerCase().replace('-', ' '),
      kind: 'worker',
      name: 'ignored',
    });
    expect(credential).toMatchObject({ role: 'worker', name: 'build-box' });
    await using worker = await connect(stack.server.url, credential.token);
    expect(await worker.rpc.auth.whoami.query()).toMatchObject({
      role: 'worker',
      credentialId: credential.credentialId,
    });

    const logged = JSON.stringify(stack.lines);
    expect(logged).toContain('pairing: a code became a credential');
    expect(logged).not.toContain(made.code);
    expect(logged).not.toContain(made.code.replace('-', ''));
    expect(logged).not.toContain(credential.token);
  });

  it("gives a client code's role to the redeemer, named as the redeemer asks when the code has no name", async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'operator' });
    const answer = await post(stack.server.httpUrl, { code: made.code, kind: 'client', name: 'laptop' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ role: 'operator', name: 'laptop', token: expect.stringMatching(/^molf_c_/) });
    await using laptop = await connect(stack.server.url, answer.body.token);
    expect(await laptop.rpc.auth.whoami.query()).toMatchObject({ role: 'operator', name: 'laptop' });
  });

  it('says whether a code is wrong, expired or already used', async () => {
    await using stack = await startPairingServer();
    const used = await stack.admin.rpc.pairing.create.mutate({ role: 'viewer' });
    expect((await post(stack.server.httpUrl, { code: used.code, kind: 'client', name: 'a' })).status).toBe(200);
    const late = await stack.admin.rpc.pairing.create.mutate({ role: 'viewer' });
    stack.advance(5 * 60_000);

    const wrong = await post(stack.server.httpUrl, { code: otherThan(used.code), kind: 'client', name: 'b' });
    const expired = await post(stack.server.httpUrl, { code: late.code, kind: 'client', name: 'c' });
    const again = await post(stack.server.httpUrl, { code: used.code, kind: 'client', name: 'd' });
    for (const answer of [wrong, expired, again]) {
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('unauthorized');
    }
    expect(wrong.body.error.message).toMatch(/^this pairing code is not valid/);
    expect(expired.body.error.message).toMatch(/^this pairing code expired at 2026-05-01T10:05:00.000Z/);
    expect(again.body.error.message).toMatch(/^this pairing code was already used/);
  });

  it('refuses a code of the other kind with the command to use, and leaves it live', async () => {
    await using stack = await startPairingServer();
    const workerCode = await stack.admin.rpc.pairing.create.mutate({ role: 'worker' });
    const asClient = await post(stack.server.httpUrl, { code: workerCode.code, kind: 'client', name: 'laptop' });
    expect(asClient.status).toBe(409);
    expect(asClient.body.error).toEqual({
      code: 'conflict',
      message: expect.stringContaining(`\`molf worker --server ${stack.server.url} --pair ${workerCode.code}\``),
    });
    const adminCode = await stack.admin.rpc.pairing.create.mutate({ role: 'admin' });
    const asWorker = await post(stack.server.httpUrl, { code: adminCode.code, kind: 'worker', name: 'box' });
    expect(asWorker.body.error.message).toContain(`\`molf login ${stack.server.url} --pair ${adminCode.code}\``);

    expect((await post(stack.server.httpUrl, { code: workerCode.code, kind: 'worker', name: 'box' })).status).toBe(200);
    expect((await post(stack.server.httpUrl, { code: adminCode.code, kind: 'client', name: 'laptop' })).status).toBe(
      200,
    );
  });

  it('refuses bad requests naming what is wrong, without counting them against the address', async () => {
    await using stack = await startPairingServer();
    const url = stack.server.httpUrl;
    const cases: Array<[Promise<Answer>, number, string, string | undefined]> = [
      [post(url, 'not json'), 400, 'invalid_input', undefined],
      [post(url, { code: 'ABCD-EFGH', name: 'x' }), 400, 'invalid_input', 'kind'],
      [post(url, { code: 'ABCD-EFGH', kind: 'robot', name: 'x' }), 400, 'invalid_input', 'kind'],
      [post(url, { code: 'ABCD-EFGH', kind: 'client', name: 'bad\u001b[2Jname' }), 400, 'invalid_input', 'name'],
      [post(url, { code: 'ABCD-EFGH', kind: 'client', name: 'x'.repeat(65) }), 400, 'invalid_input', 'name'],
      [post(url, { code: 'ABCD-EFGH', kind: 'client', name: '' }), 400, 'invalid_input', 'name'],
      [
        post(url, { code: 'ABCD-EFGH', kind: 'client' }, { headers: { 'content-type': 'text/plain' } }),
        415,
        'invalid_input',
        'content-type',
      ],
      [post(url, undefined, { method: 'GET' }), 405, 'invalid_input', undefined],
      [post(url, { code: 'ABCD-EFGH', kind: 'client', name: 'x', pad: 'x'.repeat(5000) }), 413, 'too_large', undefined],
    ];
    for (const [answer, status, code, field] of cases) {
      const { status: actual, body } = await answer;
      expect({ status: actual, code: body.error.code, field: body.error.field }).toEqual({ status, code, field });
      expect(body.error.message.length).toBeGreaterThan(10);
    }
    // A malformed code is an attempt at a code: it is named, and counted.
    const malformed = await post(url, { code: 'ABCD-EFGU', kind: 'client', name: 'x' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatchObject({ field: 'code', message: expect.stringContaining('"U"') });

    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'viewer' });
    expect((await post(url, { code: made.code, kind: 'client', name: 'x' })).status).toBe(200);
  });

  it('locks an address out after 5 wrong codes in a minute, loopback and forwarded headers included, and refuses even the right code then', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'worker' });
    const wrong = otherThan(made.code);
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      // A reverse proxy's header is never believed: every try counts against 127.0.0.1.
      const answer = await post(
        stack.server.httpUrl,
        { code: wrong, kind: 'worker', name: 'x' },
        { headers: { 'x-forwarded-for': `198.51.100.${attempt}` } },
      );
      expect(answer.status).toBe(401);
    }
    const locked = await post(stack.server.httpUrl, { code: made.code, kind: 'worker', name: 'x' });
    expect(locked.status).toBe(429);
    expect(locked.headers['retry-after']).toBe('300');
    expect(locked.body.error).toEqual({
      code: 'busy',
      message: 'too many wrong pairing codes from this address: try again in 5 min',
    });
    await post(stack.server.httpUrl, { code: made.code, kind: 'worker', name: 'x' });
    const warnings = stack.lines.filter((line) => line.level === 40 && String(line.msg).startsWith('pairing:'));
    expect(warnings).toEqual([expect.objectContaining({ remoteAddress: '127.0.0.1' })]);

    // Another address is not locked out; the code was never looked at, so it is still live.
    expect(
      (await post(stack.server.httpUrl, { code: made.code, kind: 'worker', name: 'x' }, { localAddress: '127.0.0.2' }))
        .status,
    ).toBe(200);
    const second = await stack.admin.rpc.pairing.create.mutate({ role: 'worker' });
    stack.advance(5 * 60_000 - 1_000);
    expect((await post(stack.server.httpUrl, { code: second.code, kind: 'worker', name: 'x' })).status).toBe(429);
    stack.advance(1_000);
    expect((await post(stack.server.httpUrl, { code: second.code, kind: 'worker', name: 'x' })).status).toBe(401);
  });

  it('pauses every redemption for a minute after 20 wrong codes in a minute from many addresses', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'viewer' });
    const wrong = otherThan(made.code);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const localAddress = `127.0.0.${10 + (attempt % 5)}`;
      const answer = await post(stack.server.httpUrl, { code: wrong, kind: 'client', name: 'x' }, { localAddress });
      expect(answer.status).toBe(401);
    }
    const paused = await post(
      stack.server.httpUrl,
      { code: made.code, kind: 'client', name: 'x' },
      { localAddress: '127.0.0.40' },
    );
    expect(paused.status).toBe(429);
    expect(paused.headers['retry-after']).toBe('60');
    expect(paused.body.error.message).toMatch(/pairing is paused; try again in 1 min$/);
    expect(stack.lines.some((line) => line.level === 40 && String(line.msg).includes('from all addresses'))).toBe(true);

    stack.advance(60_000);
    expect(
      (await post(stack.server.httpUrl, { code: made.code, kind: 'client', name: 'x' }, { localAddress: '127.0.0.40' }))
        .status,
    ).toBe(200);
  });

  it('lets nobody in while the pairing file is damaged, and says which file', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'admin' });
    await writeFile(join(stack.dataDir, PAIRING_CODES_FILE), '{"version": 1, "salt": 7, "codes": []}');
    const answer = await post(stack.server.httpUrl, { code: made.code, kind: 'client', name: 'x' });
    expect(answer.status).toBe(500);
    expect(answer.body.error).toEqual({
      code: 'internal',
      message: expect.stringContaining("the server's pairing-codes.json is damaged: nobody can pair"),
    });
    expect(JSON.stringify(answer.body)).not.toContain(stack.dataDir);
    expect(stack.lines.some((line) => String(JSON.stringify(line)).includes(`${PAIRING_CODES_FILE} is damaged`))).toBe(
      true,
    );
    await expect(stack.admin.rpc.pairing.list.query()).rejects.toThrow(/pairing-codes\.json is damaged/);
  });

  it('lets exactly one of many simultaneous redemptions of a code win', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'worker' });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        post(
          stack.server.httpUrl,
          { code: made.code, kind: 'worker', name: `box ${index}` },
          { localAddress: `127.0.0.${20 + index}` },
        ),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401, 401, 401, 401, 401]);
    const listed = await stack.admin.rpc.tokens.list.query();
    expect(listed.filter((credential) => credential.origin === 'paired')).toHaveLength(1);
  });
});

describe('credential administration', () => {
  it('lists credentials with how each was made, when it was last used and which is the caller', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'admin', name: 'second admin' });
    const paired = await redeemPairingCode({ url: stack.server.url, code: made.code, kind: 'client', name: 'x' });
    const created = await stack.admin.rpc.tokens.create.mutate({ role: 'viewer', name: 'wall screen' });
    expect(created.credential).toMatchObject({
      role: 'viewer',
      name: 'wall screen',
      origin: 'created',
      current: false,
    });
    expect(created.token).toMatch(/^molf_c_/);

    stack.advance(60_000);
    await using second = await connect(stack.server.url, paired.token);
    const listed = await second.rpc.tokens.list.query();
    expect(listed).toEqual([
      {
        id: paired.credentialId,
        role: 'admin',
        name: 'second admin',
        createdAt: '2026-05-01T10:00:00.000Z',
        lastUsedAt: '2026-05-01T10:01:00.000Z',
        origin: 'paired',
        current: true,
      },
      {
        id: created.credential.id,
        role: 'viewer',
        name: 'wall screen',
        createdAt: '2026-05-01T10:00:00.000Z',
        origin: 'created',
        current: false,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.token);
  });

  it('makes, lists and cancels pairing codes, listing never the code', async () => {
    await using stack = await startPairingServer();
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'viewer', name: 'screen' });
    const listed = await stack.admin.rpc.pairing.list.query();
    expect(listed).toEqual([
      { id: made.id, role: 'viewer', name: 'screen', createdAt: made.createdAt, expiresAt: made.expiresAt },
    ]);
    expect(await stack.admin.rpc.pairing.cancel.mutate({ id: made.id })).toEqual({ cancelled: true });
    await expect(stack.admin.rpc.pairing.cancel.mutate({ id: made.id })).rejects.toThrow(/no live pairing code/);
    const answer = await post(stack.server.httpUrl, { code: made.code, kind: 'client', name: 'x' });
    expect(answer.body.error.message).toMatch(/was cancelled on the server/);
  });

  it('keeps tokens and pairing to admins', async () => {
    await using stack = await startPairingServer();
    const { token } = await stack.admin.rpc.tokens.create.mutate({ role: 'operator', name: 'ops' });
    await using operator = await connect(stack.server.url, token);
    await expect(operator.rpc.tokens.list.query()).rejects.toThrow(/needs the admin role/);
    await expect(operator.rpc.pairing.create.mutate({ role: 'admin' })).rejects.toThrow(/needs the admin role/);
    await expect(operator.rpc.tokens.revoke.mutate({ id: 'x' })).rejects.toThrow(/needs the admin role/);
    await expect(stack.admin.rpc.tokens.revoke.mutate({ id: 'nope' })).rejects.toThrow(/no credential with id nope/);
    await expect(stack.admin.rpc.tokens.revoke.mutate({ id: 'fixed-client' })).rejects.toThrow(
      /from the server's configuration/,
    );
  });

  it('closes the live connection of a paired credential when it is revoked', async () => {
    await using stack = await startPairingServer({ credentialsPollMs: 20 });
    const made = await stack.admin.rpc.pairing.create.mutate({ role: 'worker' });
    const paired = await redeemPairingCode({ url: stack.server.url, code: made.code, kind: 'worker', name: 'box' });
    const statuses: string[] = [];
    await using worker = createMolfClient({
      url: stack.server.url,
      token: paired.token,
      retryDelayMs: () => 20,
      onStatus: (status) => statuses.push(status.type),
    });
    await worker.ready();
    expect(await stack.admin.rpc.tokens.revoke.mutate({ id: paired.credentialId })).toEqual({ revoked: true });
    await waitFor(() => statuses.includes('rejected'), { what: 'the revoked connection to be refused' });
    expect(statuses).toContain('closed');
  });
});
