import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SYSTEM_CHROMIUM } from '@molf/testkit';
import { chromium } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { spawnMolf, waitForOutput } from '../testing/cli-test-kit.ts';

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-up-web-'));
  onTestFinished(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

describe('molf up and the web client', () => {
  it('prints a link that logs a browser in, with the token only in the fragment and never in a log', async () => {
    const project = join(await tempDir(), 'web-project');
    await mkdir(project);
    const home = await tempDir();
    const env = { HOME: home, MOLF_HOME: home, MOLF_CLIENT_DIR: await tempDir() };
    const up = spawnMolf(['up', '--port', '0', '--sandbox', 'off'], { cwd: project, env });
    onTestFinished(() => {
      try {
        process.kill(-(up.pid as number), 'SIGKILL');
      } catch {
        // Already gone: the test stopped it.
      }
    });
    const printed = await waitForOutput(up, 'Ctrl-C stops everything');
    const link = /web:\s+(http:\/\/\S+)/.exec(printed)?.[1];
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=molf_c_/);
    const token = decodeURIComponent(link?.split('#token=')[1] ?? '');

    const browser = await chromium.launch({ ...SYSTEM_CHROMIUM, args: [...SYSTEM_CHROMIUM.args] });
    onTestFinished(() => browser.close());
    const page = await browser.newPage();
    page.setDefaultTimeout(120_000);
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(link ?? '');
    await page.getByTestId('worker-row').filter({ hasText: 'web-project' }).waitFor();
    expect(page.url()).not.toContain(token);
    // The token never left the browser in a URL.
    expect(requested.filter((url) => url.includes(token))).toEqual([]);

    process.kill(-(up.pid as number), 'SIGINT');
    await up;
    // Logs and every other file of the data directory: only the token's hash is stored.
    const files = (await readdir(home, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    expect(files.some((entry) => entry.name.endsWith('.log'))).toBe(true);
    for (const entry of files) {
      expect(await readFile(join(entry.parentPath, entry.name), 'utf8')).not.toContain(token);
    }
  });
});
