import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@molf/server';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';

const TOKENS = { client: 'molf_c_e2e-client-token-0123456789', worker: 'molf_w_e2e-worker-token-0123456789' };

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a worker's skills and agents on the server", () => {
  it('reach the server with the registration, and a SKILL.md written while the worker runs follows', async () => {
    const root = await mkdtemp(join(tmpdir(), 'molf-e2e-catalog-'));
    try {
      const workdir = join(root, 'project');
      await mkdir(join(workdir, '.claude/agents'), { recursive: true });
      await writeFile(join(workdir, '.claude/agents/helper.md'), '---\ndescription: Helps\n---\nBe helpful.\n');
      await using server = await createServer({ port: 0, dataDir: join(root, 'data'), tokens: TOKENS });
      await using worker = await createWorker({ serverUrl: server.url, token: TOKENS.worker, workdir });
      await worker.registered;
      const registered = () => server.registry.registration(worker.workerId)?.catalog;
      expect(registered()).toMatchObject({
        version: 1,
        skills: [],
        agents: [{ name: 'helper', prompt: 'Be helpful.' }],
      });

      await mkdir(join(workdir, '.agents/skills/deploy'), { recursive: true });
      await writeFile(join(workdir, '.agents/skills/deploy/SKILL.md'), '---\ndescription: Deploys\n---\nSteps.\n');
      await until(() => registered()?.skills.length === 1, "the new skill in the server's registry");
      expect(registered()?.skills).toEqual([
        { name: 'deploy', description: 'Deploys', path: '.agents/skills/deploy/SKILL.md', source: '.agents' },
      ]);
      expect(registered()?.version).toBeGreaterThan(1);
      expect(registered()).toEqual(worker.catalog());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a skill written while the server is down reaches the restarted server', async () => {
    const root = await mkdtemp(join(tmpdir(), 'molf-e2e-catalog-'));
    try {
      const workdir = join(root, 'project');
      await mkdir(workdir);
      const dataDir = join(root, 'data');
      const first = await createServer({ port: 0, dataDir, tokens: TOKENS });
      await using worker = await createWorker({
        serverUrl: first.url,
        token: TOKENS.worker,
        workdir,
        reconnect: { initialMs: 20, maxMs: 200 },
      });
      await worker.registered;
      await first.close();

      await mkdir(join(workdir, '.agents/skills/deploy'), { recursive: true });
      await writeFile(join(workdir, '.agents/skills/deploy/SKILL.md'), '---\ndescription: Deploys\n---\n');
      await until(() => worker.catalog().skills.length === 1, 'the worker to see the skill');

      // tRPC subscribes again with the registration it first sent, from before the skill.
      await using second = await createServer({ port: first.port, dataDir, tokens: TOKENS });
      await until(
        () => second.registry.registration(worker.workerId)?.catalog?.skills.length === 1,
        "the skill in the restarted server's registry",
      );
      expect(second.registry.registration(worker.workerId)?.catalog).toEqual(worker.catalog());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
