/**
 * The flags `pnpm bench` (run-benches.ts) passes to every benchmark alike: `--quick` (smaller, for
 * CI), `--json` (machine-readable output) and `--rounds N` (repetitions, for the benchmarks that
 * repeat; each names its default). A benchmark with flags of its own adds them beside these.
 */
export const BENCH_OPTIONS = {
  quick: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  rounds: { type: 'string' },
} as const;
