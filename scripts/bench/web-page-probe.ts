/**
 * What the web benchmark runs inside the page, before the page's own scripts (an init script, so
 * the page itself carries no benchmark hooks): it logs in with the client token, collects long
 * tasks, notes the largest WebSocket frame (the stored history arriving), and can watch for a
 * text to become visible, timing it from the navigation's start. It is plain JavaScript in a
 * string because this program is typed for Node, not the DOM; `readProbe` reads what it saw.
 */

/** A long task the page's main thread ran (over 50 ms, by the browser's definition). */
export type LongTask = { startMs: number; durationMs: number };

/** A text to wait for in an element matching `selector`, for at most `timeoutMs`. */
export type TextWatch = { selector: string; text: string; timeoutMs: number };

/** What the probe saw, times in ms from the navigation's start (the page's `performance.now()`). */
export type ProbeReading = {
  now: number;
  /** The watched text was first in the document… */
  inDocumentMs: number | undefined;
  /** …and first within the window, laid out (the frame that paints it). */
  visibleMs: number | undefined;
  domContentLoadedMs: number;
  longTasks: LongTask[];
  /** The largest WebSocket frame the page received, and when it arrived. */
  largestFrame: { size: number; atMs: number } | undefined;
  framesReceived: number;
  /** Elements in the document. */
  domNodes: number;
  /** `performance.memory.usedJSHeapSize` (precise with `--enable-precise-memory-info`). */
  usedJsHeap: number;
};

/** The init script: `token` is stored as the page's login; `watch` starts watching at once. */
export function pageProbeScript(options: { token: string; watch?: TextWatch }): string {
  return `(() => {
  const options = ${JSON.stringify(options)};
  try { localStorage.setItem('molf:token', options.token); } catch {}
  const probe = { longTasks: [], largestFrame: undefined, framesReceived: 0, inDocumentMs: undefined, visibleMs: undefined };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) probe.longTasks.push({ startMs: entry.startTime, durationMs: entry.duration });
  }).observe({ type: 'longtask', buffered: true });
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => {
        const data = event.data;
        const size = typeof data === 'string' ? data.length : (data.byteLength ?? data.size ?? 0);
        probe.framesReceived += 1;
        if (probe.largestFrame === undefined || size > probe.largestFrame.size) {
          probe.largestFrame = { size, atMs: performance.now() };
        }
      });
    }
  };
  const find = (selector, text) => {
    let found;
    for (const element of document.querySelectorAll(selector)) {
      if (!element.textContent.includes(text)) continue;
      found = 'present';
      const box = element.getBoundingClientRect();
      if (box.height > 0 && box.bottom > 0 && box.top < window.innerHeight) return 'visible';
    }
    return found;
  };
  /** Gives up after \`timeoutMs\`: a page that never shows the text must not keep polling. */
  probe.watch = (selector, text, timeoutMs) => {
    probe.inDocumentMs = undefined;
    probe.visibleMs = undefined;
    const deadline = performance.now() + timeoutMs;
    const check = () => {
      const found = find(selector, text);
      if (found !== undefined) probe.inDocumentMs ??= performance.now();
      if (found === 'visible') probe.visibleMs = performance.now();
      else if (performance.now() < deadline) requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  };
  probe.until = (selector, text, timeoutMs) =>
    new Promise((resolve) => {
      const deadline = performance.now() + timeoutMs;
      const check = () => {
        if (find(selector, text) === 'visible') resolve(performance.now());
        else if (performance.now() > deadline) resolve(undefined);
        else requestAnimationFrame(check);
      };
      check();
    });
  probe.read = () => ({
    now: performance.now(),
    inDocumentMs: probe.inDocumentMs,
    visibleMs: probe.visibleMs,
    domContentLoadedMs: performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? 0,
    longTasks: probe.longTasks,
    largestFrame: probe.largestFrame,
    framesReceived: probe.framesReceived,
    domNodes: document.getElementsByTagName('*').length,
    usedJsHeap: performance.memory?.usedJSHeapSize ?? 0,
  });
  /** Frames painted between start and stop, and the longest gap between two (jank the eye sees). */
  probe.startFrames = () => {
    const frames = { count: 0, last: performance.now(), longestGapMs: 0, running: true };
    const tick = (time) => {
      if (!frames.running) return;
      frames.count += 1;
      frames.longestGapMs = Math.max(frames.longestGapMs, time - frames.last);
      frames.last = time;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    probe.frames = frames;
  };
  probe.stopFrames = () => {
    probe.frames.running = false;
    return { count: probe.frames.count, longestGapMs: probe.frames.longestGapMs };
  };
  window.__molfBench = probe;
  if (options.watch !== undefined) probe.watch(options.watch.selector, options.watch.text, options.watch.timeoutMs);
})();`;
}

/** What `page.evaluate` needs: the page, typed for Node. */
export type EvaluatingPage = { evaluate(expression: string): Promise<unknown> };

export async function readProbe(page: EvaluatingPage): Promise<ProbeReading> {
  return (await page.evaluate('window.__molfBench.read()')) as ProbeReading;
}

/** The page's time once the text is visible; undefined if it was not within the watch's time. */
export async function untilVisible(page: EvaluatingPage, watch: TextWatch): Promise<number | undefined> {
  const { selector, text, timeoutMs } = watch;
  const shown = await page.evaluate(
    `window.__molfBench.until(${JSON.stringify(selector)}, ${JSON.stringify(text)}, ${timeoutMs})`,
  );
  return (shown ?? undefined) as number | undefined;
}

export async function startFrameCount(page: EvaluatingPage): Promise<void> {
  await page.evaluate('window.__molfBench.startFrames()');
}

export async function stopFrameCount(page: EvaluatingPage): Promise<{ count: number; longestGapMs: number }> {
  return (await page.evaluate('window.__molfBench.stopFrames()')) as { count: number; longestGapMs: number };
}
