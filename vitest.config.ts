import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { TEST_RUN_ENV } from '@molf/testkit/test-processes';
import { defineConfig } from 'vitest/config';
import { testFilesByTier } from './scripts/test-tiers.ts';
import { summaryReporter } from './scripts/vitest-summary-reporter.ts';
import { tierReporter } from './scripts/vitest-tier-reporter.ts';

const root = fileURLToPath(new URL('.', import.meta.url));
const tiers = testFilesByTier(root);
/** Stack tests that run a second time on the PostgreSQL backend (see apps/server/src/testing/agent-stack.ts). */
const STACK_TESTS_ON_POSTGRES = [
  'apps/server/src/agent/agent.test.ts',
  'apps/server/src/agent/subagents.test.ts',
  'apps/server/src/agent/usage.test.ts',
  'apps/server/src/agent/session-titler.test.ts',
  'apps/server/src/sessions/tool-result-files.test.ts',
  'apps/server/src/approvals/file-change-approvals.test.ts',
  'apps/server/src/cron/cron-runs.test.ts',
];

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
    projects: [
      ...(['unit', 'stack', 'cli', 'browser'] as const).map((name, groupOrder) => ({
        extends: true,
        test: {
          name,
          include: tiers[name],
          sequence: { groupOrder },
          ...TIMEOUTS[name],
        },
      })),
      {
        extends: true,
        test: {
          // The agent loop's stack tests again, with sessions and events in PostgreSQL: the same
          // behaviour sentences on the second backend.
          name: 'stack-postgres',
          include: STACK_TESTS_ON_POSTGRES,
          env: { MOLF_TEST_STORE: 'postgres' },
          sequence: { groupOrder: 4 },
          ...TIMEOUTS.stack,
        },
      },
    ],
  },
});
