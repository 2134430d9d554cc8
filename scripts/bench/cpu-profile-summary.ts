/**
 * Where a CPU profile's time went, as the benchmarks print it: self time by function (its file
 * and line), of the time the thread was not idle. The profile is the one the DevTools protocol's
 * `Profiler.stop` (and `node --cpu-prof`) returns.
 */

/** The parts of a DevTools protocol CPU profile read here. */
export type CpuProfile = {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }>;
  samples?: number[];
  timeDeltas?: number[];
};

export type CpuProfileSummary = {
  /** Sampled time in all, and of it the time the thread was busy (not idle). */
  totalMs: number;
  busyMs: number;
  /** The functions with the most self time, most first; `share` is of the busy time. */
  top: Array<{ name: string; selfMs: number; share: number }>;
  /** Self time by the group `groupOf` gives a frame (a package), most first; absent without it. */
  groups?: Array<{ name: string; selfMs: number; share: number }>;
};

type CallFrame = CpuProfile['nodes'][number]['callFrame'];

function frameName(callFrame: CallFrame): string {
  const name = callFrame.functionName === '' ? '(anonymous)' : callFrame.functionName;
  if (callFrame.url === '') return name;
  return `${name} ${fileOf(callFrame.url)}:${callFrame.lineNumber + 1}`;
}

function fileOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

/** Self time in µs by key; a sample's time is the gap to the next one (the last gets its own). */
function selfTimes(profile: CpuProfile, keyOf: (callFrame: CallFrame) => string): Map<string, number> {
  const keys = new Map(profile.nodes.map((node) => [node.id, keyOf(node.callFrame)]));
  const selfUs = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let index = 0; index < samples.length; index += 1) {
    const key = keys.get(samples[index] as number) ?? '(unknown)';
    selfUs.set(key, (selfUs.get(key) ?? 0) + (deltas[index + 1] ?? deltas[index] ?? 0));
  }
  return selfUs;
}

export function summariseCpuProfile(
  profile: CpuProfile,
  options: {
    top: number;
    /** Groups a frame of a script (file name, 1-based line), e.g. by package; others go by their name. */
    groupOf?: (file: string, line: number) => string | undefined;
  },
): CpuProfileSummary {
  const byFunction = selfTimes(profile, frameName);
  let totalUs = 0;
  for (const us of byFunction.values()) totalUs += us;
  const busyUs = totalUs - (byFunction.get('(idle)') ?? 0);
  const ranked = (selfUs: Map<string, number>) =>
    [...selfUs]
      .filter(([name]) => name !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, options.top)
      .map(([name, us]) => ({ name, selfMs: us / 1_000, share: busyUs === 0 ? 0 : us / busyUs }));
  const { groupOf } = options;
  /** Scripts by `groupOf`; V8's own entries ("(program)", "(garbage collector)") by name; the rest are the browser's. */
  const groupKey = (callFrame: CallFrame) => {
    if (callFrame.url !== '')
      return groupOf?.(fileOf(callFrame.url), callFrame.lineNumber + 1) ?? fileOf(callFrame.url);
    return callFrame.functionName.startsWith('(') ? callFrame.functionName : '(browser built-ins)';
  };
  const groups = groupOf === undefined ? undefined : ranked(selfTimes(profile, groupKey));
  return { totalMs: totalUs / 1_000, busyMs: busyUs / 1_000, top: ranked(byFunction), ...(groups ? { groups } : {}) };
}
