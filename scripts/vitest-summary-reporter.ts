import type { Reporter } from 'vitest/node';

/**
 * Ends every test run with one plain line, `tests: N passed, N failed, N skipped`, that CI and
 * people can read without parsing Vitest's coloured summary.
 */
export const summaryReporter: Reporter = {
  onTestRunEnd(testModules, unhandledErrors) {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed += 1;
        else if (state === 'failed') counts.failed += 1;
        else counts.skipped += 1;
      }
      // A file that failed to load has no tests but is still a failure.
      if (testModule.state() === 'failed' && testModule.children.size === 0) counts.failed += 1;
    }
    counts.failed += unhandledErrors.length;
    process.stdout.write(`\ntests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  },
};
