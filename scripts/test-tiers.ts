import { readFileSync } from 'node:fs';
import { globSync } from 'tinyglobby';

/**
 * The suite in three tiers, run one after the other so each tier's time shows:
 * - `unit`: pure code and single packages, in-process, no server;
 * - `stack`: a server and workers in the test process, over real sockets;
 * - `cli`: tests that spawn `molf` (or `scripts/molf`) as child processes;
 * - `browser`: tests that drive the web client in a real (headless) Chromium.
 */
export type TestTier = 'unit' | 'stack' | 'cli' | 'browser';

export const TEST_FILES = ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'scripts/**/*.test.ts'];

/** What a test file starts, read from its source: a new test lands in the right tier without a list to edit. */
const STARTS_MOLF =
  /\bspawnMolf\b|\bspawnListeningServer\b|\bstartTerminal\b|\bchatInTerminal\b|\bspawnInteractive\b|execaNode\(\s*CLI\b|\bLAUNCHER\b|scripts\/molf/;
const STARTS_A_SERVER =
  /\bcreateServer\(\s*\{|\bstartTestServer\b|\bstartTestLink\b|\bstartStack\b|\bstartLocalServer\b|\bcreateWorker\(/;

/** What a browser test calls: the web test kit's start, which launches Chromium. */
const STARTS_A_BROWSER = /\bstartWebStack\b/;

export function tierOf(source: string): TestTier {
  if (STARTS_A_BROWSER.test(source)) return 'browser';
  if (STARTS_MOLF.test(source)) return 'cli';
  if (STARTS_A_SERVER.test(source)) return 'stack';
  return 'unit';
}

/** The test files of each tier, relative to `root`. */
export function testFilesByTier(root: string): Record<TestTier, string[]> {
  const tiers: Record<TestTier, string[]> = { unit: [], stack: [], cli: [], browser: [] };
  for (const file of globSync(TEST_FILES, { cwd: root, ignore: ['**/node_modules/**'] })) {
    tiers[tierOf(readFileSync(`${root}/${file}`, 'utf8'))].push(file);
  }
  return tiers;
}
