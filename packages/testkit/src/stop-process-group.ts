/** Default time a process group gets between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 5_000;

/**
 * Ends a process started with `detached: true` (so it leads its own process group) together with
 * everything it started: SIGTERM to the group, then SIGKILL to the group after `graceMs` or as soon
 * as the leader is gone. Killing only the leader leaves its children running: a `molf up` killed
 * alone left its server and worker behind for minutes.
 */
export async function stopProcessGroup(options: {
  /** The group leader's pid (a child spawned with `detached: true`); undefined: nothing to stop. */
  pid: number | undefined;
  /** Settles when the leader has exited. */
  exited: PromiseLike<unknown>;
  /** Default {@link STOP_GRACE_MS}. */
  graceMs?: number;
}): Promise<void> {
  const { pid } = options;
  if (pid === undefined) return;
  const exited = Promise.resolve(options.exited).then(
    () => undefined,
    () => undefined,
  );
  signalGroup(pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    exited,
    new Promise((resolve) => {
      timer = setTimeout(resolve, options.graceMs ?? STOP_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  // The leader may be gone while its children live on in the group: they get SIGKILL too.
  signalGroup(pid, 'SIGKILL');
  await exited;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    // ESRCH: the whole group is gone already.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
