import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnMolf, waitForOutput } from '../testing/cli-test-kit.ts';

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-up-first-'));
  onTestFinished(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

/** A line of a stack trace, as printed or inside a JSON string. */
const STACK_LINE = /(^|\\n|\n)\s+at \S/;

describe('the first molf up in a new project', () => {
  it('starts, runs and stops without a warning, an error or a stack trace on the console', async () => {
    const project = join(await tempDir(), 'new-project');
    await mkdir(project);
    // The default log level (info) and a log file, as a person starting it would have.
    const env = { HOME: await tempDir(), MOLF_HOME: await tempDir(), MOLF_CLIENT_DIR: await tempDir() };
    const up = spawnMolf(['up', '--port', '0', '--sandbox', 'off'], { cwd: project, env });
    await waitForOutput(up, 'Ctrl-C stops everything');
    // A round trip through the server: whatever the worker sent at start has been answered.
    const workers = await spawnMolf(['workers', '--json'], { cwd: project, env });
    expect(JSON.parse(workers.stdout)).toMatchObject([{ name: 'new-project', state: 'online' }]);
    process.kill(-(up.pid as number), 'SIGINT');
    const result = await up;

    expect(result.exitCode).toBe(0);
    const console = `${result.stdout}\n${result.stderr}`;
    expect(console).toContain('"msg":"worker stopped"');
    expect(console).not.toMatch(STACK_LINE);
    const levels = console
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    // warn is 40, error 50.
    expect(levels.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
  });
});
