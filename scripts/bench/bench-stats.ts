/**
 * The nearest-rank percentile of `values` (unsorted; not changed): the value at rank
 * ⌊n × fraction⌋ of the sorted list, the last one at most. `percentile(values, 0.5)` is the median
 * the benchmarks report.
 */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
}
