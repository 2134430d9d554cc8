import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import { createTierReporter } from './vitest-tier-reporter.ts';

function testModule(project: string, tests: number): TestModule {
  return {
    project: { name: project },
    children: { allTests: () => Array.from({ length: tests }, () => ({})) },
  } as unknown as TestModule;
}

describe('the tier reporter', () => {
  it("prints each tier's files, tests and wall time from its first file's start to its last file's end", async () => {
    let now = 0;
    const written: string[] = [];
    const reporter = createTierReporter({ now: () => now, write: (text) => written.push(text) });
    const unitA = testModule('unit', 3);
    const unitB = testModule('unit', 2);
    const cli = testModule('cli', 4);
    await reporter.onTestRunStart?.([]);
    now = 1_000;
    await reporter.onTestModuleStart?.(unitA);
    now = 1_500;
    await reporter.onTestModuleStart?.(unitB);
    now = 3_000;
    await reporter.onTestModuleEnd?.(unitA);
    now = 4_250;
    await reporter.onTestModuleEnd?.(unitB);
    await reporter.onTestModuleStart?.(cli);
    now = 64_250;
    await reporter.onTestModuleEnd?.(cli);
    await reporter.onTestRunEnd?.([], [], 'passed');
    expect(written.join('')).toBe('\ntier unit: 2 files, 5 tests, 3.3 s\ntier cli: 1 files, 4 tests, 60.0 s\n');
  });
});
