import { defineConfig } from 'vitest/config';
import { summaryReporter } from './scripts/vitest-summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'scripts/**/*.test.ts'],
    globalSetup: ['./scripts/vitest-build-cli.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests spawn real processes and sockets; two cores are all we have.
    maxWorkers: 2,
    reporters: ['default', summaryReporter],
  },
});
