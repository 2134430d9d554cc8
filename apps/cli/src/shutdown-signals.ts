/**
 * Runs `stop` once on the first SIGINT or SIGTERM; a second signal exits at once, for the user
 * whose clean shutdown hangs.
 */
export function onShutdownSignal(stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  // A child of `molf up` gets Ctrl-C from the terminal and then SIGTERM from its parent; the
  // parent escalates to SIGKILL itself if needed, so a second signal must not cut shutdown short.
  const managedByParent = process.send !== undefined;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (managedByParent) return;
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
