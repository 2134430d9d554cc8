/**
 * Where a Chromium page's main thread spent its time, from a performance trace (the JSON that
 * `browser.stopTracing()` returns, categories `devtools.timeline` and `v8.execute`): self time by
 * trace event (script, style, layout, paint, GC…), which a CPU profile lumps together as
 * "(program)". Time inside a task that no event of the trace covers shows as `RunTask`.
 */

type TraceEvent = {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string };
};

export type TraceSummary = {
  /** Time the renderers' main threads ran tasks. */
  busyMs: number;
  /** The events with the most self time, most first; `share` is of the busy time. */
  top: Array<{ name: string; selfMs: number; share: number }>;
};

export function summariseTrace(trace: { traceEvents: TraceEvent[] }, options: { top: number }): TraceSummary {
  const mainThreads = new Set(
    trace.traceEvents
      .filter((event) => event.ph === 'M' && event.name === 'thread_name' && event.args?.name === 'CrRendererMain')
      .map((event) => `${event.pid}:${event.tid}`),
  );
  const byThread = new Map<string, TraceEvent[]>();
  for (const event of trace.traceEvents) {
    const thread = `${event.pid}:${event.tid}`;
    if (event.ph !== 'X' || event.dur === undefined || !mainThreads.has(thread)) continue;
    const events = byThread.get(thread);
    if (events === undefined) byThread.set(thread, [event]);
    else events.push(event);
  }
  const selfUs = new Map<string, number>();
  let busyUs = 0;
  for (const events of byThread.values()) {
    // Parents first: earlier start, then longer.
    events.sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
    const open: Array<{ event: TraceEvent; end: number; childUs: number }> = [];
    const closeInnermost = () => {
      const entry = open.pop();
      if (entry === undefined) return;
      const self = Math.max(0, (entry.event.dur ?? 0) - entry.childUs);
      selfUs.set(entry.event.name, (selfUs.get(entry.event.name) ?? 0) + self);
    };
    for (const event of events) {
      while (open.length > 0 && (open.at(-1)?.end ?? 0) <= event.ts) closeInnermost();
      const parent = open.at(-1);
      if (parent === undefined) busyUs += event.dur ?? 0;
      else parent.childUs += event.dur ?? 0;
      open.push({ event, end: event.ts + (event.dur ?? 0), childUs: 0 });
    }
    while (open.length > 0) closeInnermost();
  }
  const top = [...selfUs]
    .sort((a, b) => b[1] - a[1])
    .slice(0, options.top)
    .map(([name, us]) => ({ name, selfMs: us / 1_000, share: busyUs === 0 ? 0 : us / busyUs }));
  return { busyMs: busyUs / 1_000, top };
}
