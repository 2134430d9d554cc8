import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { TEST_RUN_ENV } from '@molf/testkit/test-processes';
import { defineConfig } from 'vitest/config';
import { testFilesByTier } from './scripts/test-tiers.ts';
import { summaryReporter } from './scripts/vitest-summary-reporter.ts';
import { tierReporter } from './scripts/vitest-tier-reporter.ts';

const root = fileURLToPath(new URL('.', import.meta.url));
const tiers = testFilesByTier(root);
/** Every process a test starts inherits this; the leftover check at the end looks for it. */
const runId = randomUUID();

/**
 * Deadlines, not budgets: a test waits on conditions (each with a generous deadline of its own)
 * and fails by these only when something hangs. They are long because the machine may be loaded
 * many times over; a passing test takes what it takes.
 */
const TIMEOUTS = {
  unit: { testTimeout: 120_000, hookTimeout: 120_000 },
  stack: { testTimeout: 240_000, hookTimeout: 120_000 },
  cli: { testTimeout: 400_000, hookTimeout: 120_000 },
  browser: { testTimeout: 400_000, hookTimeout: 120_000 },
} as const;

export default defineConfig({
  test: {
    // Integration tests spawn real processes and sockets; two cores are all we have.
    maxWorkers: 2,
    env: { [TEST_RUN_ENV]: runId },
    // The CLI bundle is rebuilt when stale (the CLI tests run what users run); no test process may outlive the run.
    globalSetup: [
      './scripts/vitest-build-cli.ts',
      './scripts/vitest-build-web.ts',
      './scripts/vitest-leftover-processes.ts',
      // After the leftover check, so its teardown (stopping the cluster) runs before that check.
      './scripts/vitest-postgres.ts',
    ],
    reporters: ['default', tierReporter, summaryReporter],
    // One tier after the other (groupOrder), so that each tier's time is its own.
    projects: (['unit', 'stack', 'cli', 'browser'] as const).map((name, groupOrder) => ({
      extends: true,
      test: {
        name,
        include: tiers[name],
        sequence: { groupOrder },
        ...TIMEOUTS[name],
      },
    })),
  },
});
