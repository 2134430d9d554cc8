import { findTestProcesses, TEST_RUN_ENV, type TestProcess } from '@molf/testkit/test-processes';
import type { TestProject } from 'vitest/node';

/** How long processes stopped at the very end of a test get to disappear before they count as left over. */
const SETTLE_MS = 15_000;

/** Vitest's own worker processes carry the marker too; they are not the tests'. */
const TEST_RUNNER = /vitest/;

/**
 * A global teardown that fails the run when a process a test started outlived the suite (a
 * `molf server` once lived on for minutes after its test): the test kits stop every process
 * they start with its whole group, and this checks that they did. Leftovers are killed and listed.
 */
export default function setup(project: TestProject) {
  const runId = project.config.env?.[TEST_RUN_ENV];
  return async () => {
    if (typeof runId !== 'string') return;
    let leftovers: TestProcess[] = [];
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      leftovers = await findTestProcesses({ runId, except: TEST_RUNNER });
      if (leftovers.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (leftovers.length === 0) return;
    for (const { pid } of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    throw new Error(
      `${leftovers.length} process(es) started by tests outlived the suite (now killed); ` +
        `a test kit must stop what it starts, with its process group:\n${leftovers
          .map(({ pid, command }) => `  ${pid}  ${command.slice(0, 200)}`)
          .join('\n')}`,
    );
  };
}
