import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadWorkerConfigFile } from './load-worker-config-file.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'molf-worker-config-')));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

describe('the worker config file', () => {
  it("reads the sandbox, with ~/ from the home and relative paths from the file's directory", async () => {
    const dir = await tempDir();
    const path = join(dir, 'worker.jsonc');
    await writeFile(
      path,
      '{\n  // comments and trailing commas are fine\n  "sandbox": { "mode": "required", "network": false, "hide": ["~/.aws", "tokens/w"], "writable": ["cache",], },\n}\n',
    );
    expect(await loadWorkerConfigFile(path, { workdir: await tempDir(), home: '/home/me' })).toEqual({
      sandbox: {
        mode: 'required',
        network: false,
        hide: ['/home/me/.aws', join(dir, 'tokens', 'w')],
        writable: [join(dir, 'cache')],
      },
    });
  });

  it('refuses a file inside the workdir, where the model can write, also through a symlinked path', async () => {
    const workdir = await tempDir();
    await mkdir(join(workdir, 'config'));
    await writeFile(join(workdir, 'config', 'worker.jsonc'), '{}');
    const link = join(await tempDir(), 'worker.jsonc');
    await symlink(join(workdir, 'config', 'worker.jsonc'), link);
    for (const path of [join(workdir, 'config', 'worker.jsonc'), link]) {
      await expect(loadWorkerConfigFile(path, { workdir })).rejects.toMatchObject({
        code: 'config_invalid',
        message: expect.stringContaining('is inside the workdir'),
      });
    }
  });

  it.each([
    ['{ "sandbox": { "mode": "on" ', /line 1, column \d+: invalid JSONC/],
    ['{ "sandbox": { "mode": "always" } }', /"sandbox.mode"/],
    ['{ "sandbox": { "netwrok": false } }', /"sandbox": .*netwrok/],
    ['{ "token": "x" }', /token/],
  ])('refuses %s naming where', async (text, message) => {
    const path = join(await tempDir(), 'worker.jsonc');
    await writeFile(path, text);
    await expect(loadWorkerConfigFile(path, { workdir: await tempDir() })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(message),
    });
  });
});
