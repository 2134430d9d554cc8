import { readdir, readFile } from 'node:fs/promises';

/**
 * Set by the test configuration in every test worker's environment, with one value per test
 * run; every process a test starts inherits it, so the run can find what outlived it.
 */
export const TEST_RUN_ENV = 'MOLF_TEST_RUN';

export type TestProcess = { pid: number; command: string };

/**
 * The live processes whose environment carries `TEST_RUN_ENV=runId`, except those whose command
 * line matches `except` (the test runner's own workers). Linux only (reads /proc); elsewhere none.
 */
export async function findTestProcesses(options: { runId: string; except?: RegExp }): Promise<TestProcess[]> {
  const marker = `\0${TEST_RUN_ENV}=${options.runId}\0`;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: TestProcess[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    // A process may end while it is read, or belong to another user: then it is not ours.
    const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
    if (!`\0${environ}`.includes(marker)) continue;
    const command = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
    // A zombie has an empty command line: it is dead, only not yet reaped by its parent.
    if (command === '' || options.except?.test(command)) continue;
    found.push({ pid, command });
  }
  return found;
}
