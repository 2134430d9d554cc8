import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient, redeemPairingCode } from '@molf/client/node';
import type { CredentialInfo, PairingCodeInfo } from '@molf/protocol';
import { createServer } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, stopSpawnedProcesses, waitForOutput } from '../testing/cli-test-kit.ts';

const ADMIN_TOKEN = 'molf_c_pair-command-test-admin-token';
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-pair-'));
  cleanups.push(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

/** A server in this process on a data directory the CLI is also pointed at. */
async function startServer() {
  const dataDir = await tempDir();
  const server = await createServer({ port: 0, dataDir, tokens: { client: ADMIN_TOKEN } });
  cleanups.push(() => server.close());
  const env = {
    MOLF_HOME: await tempDir(),
    MOLF_CLIENT_DIR: await tempDir(),
    MOLF_LOG_LEVEL: 'warn',
    MOLF_LOG_FILE: 'none',
  };
  const molf = (args: string[]) => spawnMolf(args, { env, extendEnv: false });
  return { server, dataDir, molf };
}

const codeIn = (text: string) => /pairing code [^:]*: ([0-9A-Z]{4}-[0-9A-Z]{4})/.exec(text)?.[1] ?? '';
const idIn = (text: string) => /molf pair cancel ([0-9a-f]+)/.exec(text)?.[1] ?? '';

describe('molf pair', () => {
  it('refuses to make a code without --role, listing the roles', async () => {
    const { dataDir, molf } = await startServer();
    const result = await molf(['pair', '--data-dir', dataDir]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('molf pair: say what the code is for with --role: worker (');
    for (const role of ['admin (', 'operator (', 'viewer (']) expect(result.stderr).toContain(role);
    const wrong = await molf(['pair', '--role', 'root', '--data-dir', dataDir]);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain('use one of: worker');
  });

  it('makes a code on the server machine that the running server redeems, with the command to run there', async () => {
    const { server, dataDir, molf } = await startServer();
    const made = await molf(['pair', '--role', 'worker', '--name', 'build-box', '--data-dir', dataDir]);
    expect(made.exitCode).toBe(0);
    const code = codeIn(made.stdout);
    expect(made.stdout).toContain(`pairing code for a worker named "build-box": ${code}`);
    expect(made.stdout).toContain(`  molf worker --server wss://SERVER:7600 --pair ${code}`);
    expect(made.stdout).toContain('wss://SERVER:7600 stands for this server');
    expect(made.stdout).toMatch(/expires in 4 min \(/);

    const listed = await molf(['pair', 'list', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(listed.stdout) as PairingCodeInfo[]).toEqual([
      expect.objectContaining({ id: idIn(made.stdout), role: 'worker', name: 'build-box' }),
    ]);
    expect(listed.stdout).not.toContain(code);

    const credential = await redeemPairingCode({ url: server.url, code, kind: 'worker', name: 'x' });
    expect(credential).toMatchObject({ role: 'worker', name: 'build-box' });
    const worker = createMolfClient({ url: server.url, token: credential.token });
    await worker.ready();
    await worker.close();
    // The server writes when credentials were last used at close (or every 10 s).
    await server.close();

    const table = await molf(['token', 'list', '--data-dir', dataDir]);
    expect(table.stdout).toMatch(/^ID\s+ROLE\s+NAME\s+CREATED\s+LAST USED\s+MADE$/m);
    expect(table.stdout).toMatch(
      new RegExp(
        `^${credential.credentialId}\\s+worker\\s+build-box\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:]+Z\\s+(just now|\\d+ s ago|\\d+ min ago) \\(.+Z\\)\\s+paired$`,
        'm',
      ),
    );
  });

  it('gives the peer URL when told, and lists and cancels codes', async () => {
    const { dataDir, molf } = await startServer();
    const made = await molf([
      'pair',
      '--role',
      'operator',
      '--url-for-peers',
      'wss://molf.example.org:7600',
      '--data-dir',
      dataDir,
    ]);
    expect(made.stdout).toContain('pairing code for a client with the operator role');
    expect(made.stdout).toContain(`  molf login wss://molf.example.org:7600 --pair ${codeIn(made.stdout)}`);
    expect(made.stdout).not.toContain('SERVER');

    const table = await molf(['pair', 'list', '--data-dir', dataDir]);
    expect(table.stdout).toMatch(
      new RegExp(`^${idIn(made.stdout)}\\s+operator\\s+\\(the redeemer names it\\)\\s+in [1-4] min`, 'm'),
    );
    expect((await molf(['pair', 'cancel', idIn(made.stdout), '--data-dir', dataDir])).stdout).toBe(
      `cancelled pairing code ${idIn(made.stdout)}`,
    );
    expect((await molf(['pair', 'list', '--data-dir', dataDir])).stdout).toBe('no live pairing codes');
    const again = await molf(['pair', 'cancel', idIn(made.stdout), '--data-dir', dataDir]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain(`no live pairing code with id ${idIn(made.stdout)}`);
  });

  it('shows stored names that hold control or format characters escaped on one line, as an older file may hold them', async () => {
    const dataDir = await tempDir();
    const env = { MOLF_HOME: await tempDir(), MOLF_CLIENT_DIR: await tempDir(), MOLF_LOG_FILE: 'none' };
    // A version 1 file: its labels came from `--label` as typed, nothing checked.
    const label = 'ci\u001b]0;t\u0007\n\u202eevil';
    await writeFile(
      join(dataDir, 'credentials.json'),
      JSON.stringify({
        version: 1,
        credentials: [
          { id: 'abcd1234', role: 'client', label, hash: '0'.repeat(64), createdAt: '2026-05-01T10:00:00Z' },
        ],
      }),
    );
    const now = Date.now();
    await writeFile(
      join(dataDir, 'pairing-codes.json'),
      JSON.stringify({
        version: 1,
        salt: 'c2FsdHNhbHRzYWx0c2FsdA==',
        codes: [
          {
            id: 'c0de0001',
            hash: 'f'.repeat(64),
            role: 'viewer',
            name: 'screen\u001b[8m\ttab',
            createdAt: new Date(now).toISOString(),
            expiresAt: new Date(now + 5 * 60_000).toISOString(),
          },
        ],
      }),
    );
    const tokens = await spawnMolf(['token', 'list', '--data-dir', dataDir], { env, extendEnv: false });
    const codes = await spawnMolf(['pair', 'list', '--data-dir', dataDir], { env, extendEnv: false });
    for (const line of [...tokens.stdout.split('\n'), ...codes.stdout.split('\n')]) expect(line).not.toMatch(/\p{C}/u);
    expect(tokens.stdout).toMatch(/^abcd1234\s+admin\s+ci\\x1b\]0;t\\x07\\x0a\\u\{202e\}evil\s+2026-05-01T10:00:00Z/m);
    expect(tokens.stdout.split('\n')).toHaveLength(2);
    expect(codes.stdout).toMatch(/^c0de0001\s+viewer\s+screen\\x1b\[8m\\x09tab\s+in [1-5] min/m);
  });

  it("pairs a worker whose directory's name holds a newline and is long: the name it gives is made to fit", async () => {
    const { server, dataDir, molf } = await startServer();
    const made = await molf(['pair', '--role', 'worker', '--data-dir', dataDir]);
    // 63 UTF-16 units before the emoji: a cut at 64 units would split it.
    const stem = `proj line-${'x'.repeat(53)}`;
    const workdir = join(await tempDir(), `proj\nline-${'x'.repeat(53)}😀tail`);
    await mkdir(workdir);
    const worker = spawnMolf(['worker', '--server', server.url, '--pair', codeIn(made.stdout), '--workdir', workdir], {
      env: { MOLF_HOME: await tempDir(), MOLF_CLIENT_DIR: await tempDir(), MOLF_LOG_FILE: 'none' },
      extendEnv: false,
    });
    const said = await waitForOutput(worker, 'paired as', { stderr: true });
    expect(said).toContain(`molf worker: paired as "${stem}" (credential `);
    const listed = JSON.parse(
      (await molf(['token', 'list', '--json', '--data-dir', dataDir])).stdout,
    ) as CredentialInfo[];
    expect(listed.map(({ name, origin }) => ({ name, origin }))).toEqual([{ name: stem, origin: 'paired' }]);
  });

  it('works through a running server with --server and an admin token', async () => {
    const { server, molf } = await startServer();
    const remote = ['--server', server.url, '--token', ADMIN_TOKEN];
    const made = await molf(['pair', '--role', 'viewer', ...remote]);
    expect(made.exitCode).toBe(0);
    // The URL this command used is a loopback one: no use on another machine.
    expect(made.stdout).toContain(`  molf login wss://SERVER:7600 --pair ${codeIn(made.stdout)}`);
    expect(made.stdout).toContain(`${server.url} is a loopback address`);
    await redeemPairingCode({ url: server.url, code: codeIn(made.stdout), kind: 'client', name: 'wall screen' });

    const created = await molf(['token', 'create', '--role', 'operator', '--label', 'ci', ...remote]);
    const id = /^operator token (\S+): molf_c_\S+$/m.exec(created.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    const listed = JSON.parse((await molf(['token', 'list', '--json', ...remote])).stdout) as CredentialInfo[];
    expect(listed.map(({ role, name, origin }) => ({ role, name, origin }))).toEqual([
      { role: 'viewer', name: 'wall screen', origin: 'paired' },
      { role: 'operator', name: 'ci', origin: 'created' },
    ]);
    expect((await molf(['token', 'revoke', id, ...remote])).stdout).toBe(`revoked ${id}`);
    const table = await molf(['token', 'list', ...remote]);
    expect(table.stdout).not.toContain(id);
    expect(table.stdout).toContain('wall screen');

    const refused = await molf(['token', 'create', '--role', 'viewer', '--name', 'bad\u0007name', ...remote]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('control or invisible format characters');
  });

  it('asks for --yes before an admin revokes, through a server, the very credential it connects with', async () => {
    const { server, molf } = await startServer();
    const created = await molf([
      'token',
      'create',
      '--role',
      'admin',
      '--name',
      'me',
      '--server',
      server.url,
      '--token',
      ADMIN_TOKEN,
    ]);
    const [, id, token] = /^admin token (\S+): (molf_c_\S+)$/m.exec(created.stdout) ?? [];
    expect(token).toBeDefined();
    const asMe = ['--server', server.url, '--token', token ?? ''];

    const refused = await molf(['token', 'revoke', id ?? '', ...asMe]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(`${id} ("me") is the credential this command connects with`);
    expect(server.credentials.list().some((credential) => credential.id === id)).toBe(true);

    expect((await molf(['token', 'revoke', id ?? '', '--yes', ...asMe])).stdout).toBe(`revoked ${id}`);
    expect(server.credentials.list().some((credential) => credential.id === id)).toBe(false);
  });
});
