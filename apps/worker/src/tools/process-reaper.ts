import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * Ends the process groups of a worker's commands when the worker goes, however it goes.
 * `setpriv --pdeathsig` would only reach a command's shell, not the background children it left
 * in its group; sandboxed commands die with the worker anyway (`--die-with-parent` and their PID
 * namespace), this covers the unsandboxed ones.
 */
export type ProcessReaper = {
  /** Kill this process group (a command's, by its leader's pid) when the worker ends. */
  track(processGroupId: number): void;
  /**
   * The command of this group ended (its leader exited): the group is forgotten now if no process
   * is left in it, else as soon as one of the later looks finds it empty.
   */
  ended(processGroupId: number): void;
  /** Forgets the tracked groups with no process left (their id may go to another process later). */
  prune(): void;
  /** The groups tracked now. */
  tracked(): number[];
  /** Kills the tracked groups that still have processes, and stops the reaper. */
  close(): void;
};

/**
 * A tiny `/bin/sh` loop in a session of its own (so a terminal's Ctrl-C or hang-up does not reach
 * it) that reads `+pgid` / `-pgid` lines from a pipe only the worker holds. When the pipe reaches
 * EOF — the worker exited, crashed or was killed with SIGKILL — it sends SIGTERM to every group
 * it still knows, then SIGKILL 200 ms later (the grace shell_exec gives on a timeout) to those the
 * SIGTERM reached (a group already gone is not signalled again), and exits.
 * The pipe's write end is close-on-exec, so no command inherits it and keeps it open.
 */
const REAPER_SCRIPT = `
trap '' INT HUP TERM QUIT
groups=' '
while IFS= read -r line; do
  id=\${line#?}
  case $id in ''|*[!0-9]*) continue ;; esac
  case $line in
    +*) groups="$groups$id " ;;
    -*) case $groups in *" $id "*) groups="\${groups%% $id *} \${groups#* $id }" ;; esac ;;
  esac
done
alive=''
for id in $groups; do kill -s TERM -- "-$id" 2>/dev/null && alive="$alive $id"; done
[ -z "$alive" ] && exit 0
sleep 0.2
for id in $alive; do kill -s KILL -- "-$id" 2>/dev/null; done
`;

function groupAlive(processGroupId: number): boolean {
  try {
    process.kill(-processGroupId, 0);
    return true;
  } catch {
    // ESRCH: empty. EPERM: the id now belongs to another user's group, not ours to kill.
    return false;
  }
}

/** How often groups whose command ended but which still had processes are looked at again. */
const LINGERING_CHECK_MS = 5_000;

/**
 * A reaper, started with the first command (a worker that runs none has no extra process). It never
 * keeps the worker's event loop alive. A process group id is free for the system to give to an
 * unrelated process once the group is empty, and the reaper must then not kill it: a group is
 * forgotten when its command ends if nothing is left in it; one that a background child still holds
 * stays tracked and is looked at again at each new command, every few seconds while there are such
 * groups, and at close.
 */
export function createProcessReaper(): ProcessReaper {
  let input: Socket | undefined;
  const tracked = new Set<number>();
  /** Tracked groups whose command ended while processes were left in them. */
  const lingering = new Set<number>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const start = (): Socket => {
    const child = spawn('/bin/sh', ['-c', REAPER_SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => {
      // No /bin/sh: commands still run, they just do not end with a killed worker.
    });
    child.unref();
    // A pipe is a net.Socket, which can be unref'd: it must not hold the worker's event loop open.
    const pipe = child.stdin as Socket;
    pipe.on('error', () => {});
    pipe.unref();
    return pipe;
  };
  const send = (line: string) => {
    if (closed) return;
    input ??= start();
    if (input.writable) input.write(`${line}\n`);
  };
  const forget = (id: number) => {
    tracked.delete(id);
    lingering.delete(id);
    send(`-${id}`);
  };
  const prune = () => {
    for (const id of tracked) if (!groupAlive(id)) forget(id);
    if (lingering.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    track(processGroupId) {
      prune();
      tracked.add(processGroupId);
      send(`+${processGroupId}`);
    },
    ended(processGroupId) {
      if (!tracked.has(processGroupId)) return;
      if (!groupAlive(processGroupId)) {
        forget(processGroupId);
        return;
      }
      lingering.add(processGroupId);
      if (timer === undefined && !closed) {
        timer = setInterval(prune, LINGERING_CHECK_MS);
        timer.unref();
      }
    },
    prune,
    tracked: () => [...tracked],
    close() {
      if (closed) return;
      prune();
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      input?.end();
    },
  };
}
