import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { spawnListeningServer, spawnMolf, stopSpawnedProcesses } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-server-origin-'));
  cleanups.push(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

/** `open`, or the HTTP status that refused the upgrade. */
function tryOpen(url: string, origin: string) {
  return new Promise<'open' | number>((resolve, reject) => {
    const socket = new WebSocket(url, { origin });
    socket.on('open', () => {
      socket.terminate();
      resolve('open');
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('error', reject);
  });
}

describe('molf server --allowed-origin', () => {
  it('accepts browsers from the origins given by flag and by the config file, and refuses others', async () => {
    const home = await tempDir();
    await writeFile(join(home, 'config.jsonc'), '{ "allowedOrigins": ["https://from-file.example"] }');
    const { url } = await spawnListeningServer(
      ['--port', '0', '--allowed-origin', 'https://app.example', '--allowed-origin', 'http://dev.example:3000'],
      { env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none', MOLF_LOG_LEVEL: 'warn' } },
    );
    expect(await tryOpen(url, 'https://app.example')).toBe('open');
    expect(await tryOpen(url, 'http://dev.example:3000')).toBe('open');
    expect(await tryOpen(url, 'https://from-file.example')).toBe('open');
    expect(await tryOpen(url, 'https://evil.example')).toBe(403);
  });

  it('refuses to start with an allowed origin that is not one, as a usage error (exit 2)', async () => {
    const home = await tempDir();
    const result = await spawnMolf(['server', '--port', '0', '--allowed-origin', 'app.example'], {
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--allowed-origin');
    expect(result.stderr).toContain('app.example');
    expect(result.stderr).toContain('http(s)://host[:port]');
  });
});
