import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { createServer, generateCertificate } from '@molf/server';
import { describe, expect, it } from 'vitest';
import { spawnMolf, useTestScope } from '../testing/cli-test-kit.ts';
import { startTerminal } from '../testing/terminal-kit.ts';

const { cleanups, tempDir } = useTestScope('tofu');

const PAIRING_CODE = /\b[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}\b/;

/** A TLS server of this process with a generated certificate, and a way to make pairing codes for it. */
async function tlsServer() {
  const dataDir = await tempDir();
  const certificate = await generateCertificate({ names: ['127.0.0.1'] });
  const server = await createServer({ port: 0, dataDir, tls: certificate, generateMissingTokens: true });
  cleanups.push(() => server.close());
  const pair = async (role: string) => {
    const made = await spawnMolf(['pair', '--role', role], { env: { MOLF_HOME: dataDir, MOLF_LOG_FILE: 'none' } });
    const code = made.stdout.match(PAIRING_CODE)?.[0];
    if (code === undefined) throw new Error(`no code in: ${made.stdout}${made.stderr}`);
    return code;
  };
  return { server, pair, fingerprint: new X509Certificate(certificate.cert).fingerprint256 };
}

/** A machine of its own for the client side: its client dir and home. */
async function otherMachine() {
  const home = await tempDir();
  return { MOLF_HOME: home, MOLF_CLIENT_DIR: join(home, 'client'), MOLF_LOG_FILE: 'none' };
}

describe('trust on first use, in a terminal', () => {
  it('molf login shows the fingerprint and asks; yes pins the certificate and logs in', async () => {
    const { server, pair, fingerprint } = await tlsServer();
    const code = await pair('operator');
    const env = await otherMachine();
    const terminal = await startTerminal(['login', server.url, '--pair', code, '--name', 'laptop'], {
      cwd: env.MOLF_HOME,
      env,
      width: 160,
    });
    const question = await terminal.waitFor('Trust this server and pin its certificate? [y/N]');
    expect(question).toContain(fingerprint);
    expect(question).toContain('molf server --print-fingerprint');
    await terminal.type('y');
    await terminal.press('Enter');
    await terminal.waitFor(/logged in to .* as "laptop", an operator/);

    const pins = await spawnMolf(['trust', '--list'], { env });
    expect(pins.stdout).toContain(`pinned SHA-256 ${fingerprint}`);
    // The next command asks nothing: the saved login and the pin do.
    const workers = await spawnMolf(['workers'], { env });
    expect(workers.exitCode, workers.stderr).toBe(0);
    expect(workers.stdout).toContain('no workers registered');
  });

  it('molf worker asks on a terminal; no sends nothing and keeps the code, yes pairs and serves', async () => {
    const { server, pair, fingerprint } = await tlsServer();
    const code = await pair('worker');
    const env = await otherMachine();
    const project = await tempDir();
    const args = ['worker', '--server', server.url, '--pair', code, '--workdir', project];

    const refusing = await startTerminal(args, { cwd: project, env, width: 160 });
    await refusing.waitFor('Trust this server and pin its certificate? [y/N]');
    await refusing.type('n');
    await refusing.press('Enter');
    await refusing.waitFor('Nothing was sent');

    const accepting = await startTerminal(args, { cwd: project, env, width: 160 });
    expect(await accepting.waitFor('Trust this server and pin its certificate? [y/N]')).toContain(fingerprint);
    await accepting.type('y');
    await accepting.press('Enter');
    await accepting.waitFor(/serving .* via wss:/);
    expect(await accepting.screen()).toMatch(/paired as/);
  });

  it('molf worker without a terminal refuses an unknown certificate, saying how to pin it, and the code stays good', async () => {
    const { server, pair, fingerprint } = await tlsServer();
    const code = await pair('worker');
    const env = await otherMachine();
    const project = await tempDir();
    const refused = await spawnMolf(['worker', '--server', server.url, '--pair', code, '--workdir', project], { env });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('Nothing was sent');
    expect(refused.stderr).toContain(`--fingerprint ${fingerprint}`);

    const paired = spawnMolf(
      ['worker', '--server', server.url, '--pair', code, '--fingerprint', fingerprint, '--workdir', project],
      { env },
    );
    let output = '';
    paired.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await expect.poll(() => output, { timeout: 120_000, interval: 50 }).toMatch(/serving .* via wss:/);
  });

  it('molf trust re-pins a renewed certificate only with its new fingerprint, saying which pin it replaces', async () => {
    const dataDir = await tempDir();
    const first = await generateCertificate({ names: ['127.0.0.1'] });
    const renewed = await generateCertificate({ names: ['127.0.0.1'] });
    const before = await createServer({ port: 0, dataDir, tls: first });
    const { url, port } = before;
    const env = await otherMachine();
    const oldPrint = new X509Certificate(first.cert).fingerprint256;
    const newPrint = new X509Certificate(renewed.cert).fingerprint256;
    expect((await spawnMolf(['trust', url, '--fingerprint', oldPrint], { env })).stdout).toContain(
      `SHA-256 ${oldPrint} is pinned`,
    );
    await before.close();
    const after = await createServer({ port, dataDir, tls: renewed });
    cleanups.push(() => after.close());

    // The old fingerprint again (or a mistyped new one) is refused, and the pin stays.
    const refused = await spawnMolf(['trust', url, '--fingerprint', oldPrint], { env });
    expect(refused.exitCode).toBe(1);
    expect((await spawnMolf(['trust', '--list'], { env })).stdout).toContain(`pinned SHA-256 ${oldPrint}`);

    const repinned = await spawnMolf(['trust', url, '--fingerprint', newPrint], { env });
    expect(repinned.stdout).toContain(`SHA-256 ${newPrint} is pinned (it replaces the pin of `);
    expect(repinned.stdout).toContain(`SHA-256 ${oldPrint})`);
    expect((await spawnMolf(['trust', '--list'], { env })).stdout).toContain(`pinned SHA-256 ${newPrint}`);
  });
});
