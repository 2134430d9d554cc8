import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerInfo } from '@molf/protocol';
import { startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cleanups, spawnMolf, startLocalServer, stopSpawnedProcesses } from '../testing/cli-test-kit.ts';

const cleanups: Cleanups = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-workers-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

describe('molf workers', () => {
  it("lists below the table each online worker's skills, its agents (built-in ones marked) and its catalog problems", async () => {
    const llm = await startFakeLlm({ turns: [] });
    cleanups.push(() => llm.close());
    const dataDir = await tempDir();
    const project = await tempDir();
    // In place before the worker starts: its first registration carries them.
    await mkdir(join(project, '.agents', 'skills', 'deploy'), { recursive: true });
    await writeFile(
      join(project, '.agents', 'skills', 'deploy', 'SKILL.md'),
      '---\ndescription: How to deploy this project to staging\n---\nRun make deploy.\n',
    );
    await mkdir(join(project, '.agents', 'skills', 'empty'), { recursive: true });
    await mkdir(join(project, '.agents', 'agents'), { recursive: true });
    await writeFile(
      join(project, '.agents', 'agents', 'reviewer.md'),
      '---\ndescription: Reviews code without touching it\n---\nYou review code.\n',
    );
    const { worker, server, tokens } = await startLocalServer(cleanups, {
      dataDir,
      workdir: project,
      llmBaseURL: llm.baseURL,
      tokenSuffix: 'workers-catalog-token-01',
    });
    const env = { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir };

    const listed = await spawnMolf(['workers', '--server', server.url, '--token', tokens.client], { env });
    expect(listed.exitCode).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATE\s+SANDBOX\s+ID\s+WORKDIR\s+LAST SEEN$/);
    expect(lines[1]).toContain(worker.workerId);
    expect(lines[2]).toBe('');
    expect(lines.slice(3)).toEqual([
      `worker ${worker.name} (${worker.workerId}):`,
      '  skills (1):',
      '    deploy — How to deploy this project to staging',
      '  agents (3):',
      expect.stringMatching(/^ {4}explore \(built-in\) — \S/),
      expect.stringMatching(/^ {4}general \(built-in\) — \S/),
      '    reviewer — Reviews code without touching it',
      '  problems (1):',
      expect.stringMatching(/^ {4}\.agents\/skills\/empty\S*: .*SKILL\.md/),
    ]);

    const json = await spawnMolf(['workers', '--json', '--server', server.url, '--token', tokens.client], { env });
    const [info] = JSON.parse(json.stdout) as WorkerInfo[];
    expect(info?.catalog?.skills.map((skill) => skill.name)).toEqual(['deploy']);
    expect(info?.catalog?.agents.map((agent) => [agent.name, agent.builtin])).toEqual([
      ['explore', true],
      ['general', true],
      ['reviewer', false],
    ]);
  });
});
