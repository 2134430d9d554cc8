export type BackoffOptions = {
  /** First delay. Default 1 s. */
  initialMs?: number;
  /** Growth per attempt. Default 2. */
  factor?: number;
  /** Ceiling. Default 30 s. */
  maxMs?: number;
  /** Random spread around each delay, as a fraction. Default 0.25 (±25 %). */
  jitter?: number;
  /** Default Math.random; tests pass their own. */
  random?: () => number;
};

/** Reconnect delays: 1 s, ×2, at most 30 s, ±25 % jitter, so a restarted server isn't stampeded. */
export function createBackoff(options: BackoffOptions = {}): (attemptIndex: number) => number {
  const initialMs = options.initialMs ?? 1_000;
  const factor = options.factor ?? 2;
  const maxMs = options.maxMs ?? 30_000;
  const jitter = options.jitter ?? 0.25;
  const random = options.random ?? Math.random;
  return (attemptIndex) => {
    const base = Math.min(maxMs, initialMs * factor ** Math.max(0, attemptIndex));
    return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
  };
}
