import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@molf/server';
import { startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cleanups, spawnMolf, stopSpawnedProcesses } from '../testing/cli-test-kit.ts';

const cleanups: Cleanups = [];

afterEach(async () => {
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-chat-continue-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

describe('molf chat resuming on a server with several workers', () => {
  it('continues the last session of the worker of this directory, and a named session, without --worker', async () => {
    const llm = await startFakeLlm({ turns: [{ text: 'Answer in project A.' }] });
    cleanups.push(() => llm.close());
    const dataDir = await tempDir();
    const tokens = { client: 'molf_c_chat-continue-two-workers-1', worker: 'molf_w_chat-continue-two-workers-1' };
    const server = await createServer({
      port: 0,
      dataDir,
      tokens,
      models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
    });
    cleanups.push(() => server.close());
    const projectA = await tempDir();
    const projectB = await tempDir();
    for (const workdir of [projectA, projectB]) {
      const worker = await createWorker({ serverUrl: server.url, token: tokens.worker, workdir });
      cleanups.push(() => worker.close());
      await worker.registered;
    }
    const workerA = server.registry.list().find((worker) => worker.workdir === projectA)?.workerId ?? '';
    const env = { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir };
    const connection = ['--server', server.url, '--token', tokens.client];
    const first = await spawnMolf(['run', ...connection, '--worker', workerA, 'question in project A'], {
      cwd: projectA,
      env,
    });
    expect(first.exitCode).toBe(0);
    const sessionId = /session: (\S+)/.exec(first.stderr)?.[1] ?? '';

    const continued = await spawnMolf(['chat', ...connection, '--continue'], { cwd: projectA, env, input: '/exit\n' });
    expect(continued.stderr).not.toContain('workers are online');
    expect(continued.exitCode).toBe(0);
    expect(continued.stdout).toContain(`session question in project A · ${sessionId}`);
    expect(continued.stdout).toContain('Answer in project A.');

    const named = await spawnMolf(['chat', ...connection, '--session', sessionId], {
      cwd: projectB,
      env,
      input: '/exit\n',
    });
    expect(named.exitCode).toBe(0);
    expect(named.stdout).toContain('Answer in project A.');
  });
});
