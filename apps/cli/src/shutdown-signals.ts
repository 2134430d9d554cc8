/** Set by `molf up` in its children's environment: their parent supervises their shutdown. */
export const SUPERVISED_ENV = 'MOLF_SUPERVISED';

/**
 * Runs `stop` once on the first SIGINT or SIGTERM. A second signal means the user's clean
 * shutdown hangs: `onForce` runs (e.g. to kill children) and the process exits at once.
 *
 * A child of `molf up` gets Ctrl-C from the terminal and then SIGTERM from its parent; the
 * parent escalates to SIGKILL itself, so there a second signal must not cut shutdown short.
 */
export function onShutdownSignal(
  stop: (signal: NodeJS.Signals) => Promise<void>,
  options: { onForce?: () => void } = {},
): void {
  let stopping = false;
  const supervised = process.env[SUPERVISED_ENV] === '1';
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (supervised) return;
      options.onForce?.();
      process.exit(130);
    }
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`molf: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}

/** Tells a parent `molf up`, over the IPC channel it opened, that this process is ready. */
export function notifyParent(message: Record<string, unknown>): void {
  process.send?.(message);
}
