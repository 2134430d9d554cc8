import type { Reporter, TestModule } from 'vitest/node';

type TierTime = { files: number; tests: number; startedAt: number; endedAt: number };

/**
 * Prints each tier's (Vitest project's) wall time at the end of a run, e.g.
 * `tier cli: 15 files, 90 tests, 312.4 s`. The tiers run one after the other, so the figures add up.
 */
export function createTierReporter(
  options: {
    /** Default Date.now; tests pass their own clock. */
    now?: () => number;
    /** Default: to stdout. */
    write?: (text: string) => void;
  } = {},
): Reporter {
  const now = options.now ?? Date.now;
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const tiers = new Map<string, TierTime>();
  const tierOf = (testModule: TestModule) => {
    const name = testModule.project.name || 'default';
    let tier = tiers.get(name);
    if (tier === undefined) {
      tier = { files: 0, tests: 0, startedAt: Number.POSITIVE_INFINITY, endedAt: 0 };
      tiers.set(name, tier);
    }
    return tier;
  };
  return {
    onTestRunStart() {
      tiers.clear();
    },
    onTestModuleStart(testModule) {
      const tier = tierOf(testModule);
      tier.startedAt = Math.min(tier.startedAt, now());
    },
    onTestModuleEnd(testModule) {
      const tier = tierOf(testModule);
      tier.endedAt = Math.max(tier.endedAt, now());
      tier.files += 1;
      tier.tests += [...testModule.children.allTests()].length;
    },
    onTestRunEnd() {
      const lines = [...tiers].map(([name, tier]) => {
        const seconds = Math.max(0, tier.endedAt - tier.startedAt) / 1_000;
        return `tier ${name}: ${tier.files} files, ${tier.tests} tests, ${seconds.toFixed(1)} s`;
      });
      if (lines.length > 0) write(`\n${lines.join('\n')}\n`);
    },
  };
}

export const tierReporter: Reporter = createTierReporter();
