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
  /** Kills the tracked groups that still have processes, and stops the reaper. */
  close(): void;
};

/**
 * A tiny `/bin/sh` loop in a session of its own (so a terminal's Ctrl-C or hang-up does not reach
 * it) that reads `+pgid` / `-pgid` lines from a pipe only the worker holds. When the pipe reaches
 * EOF — the worker exited, crashed or was killed with SIGKILL — it sends SIGTERM to every group
 * it still knows, then SIGKILL 200 ms later (the grace shell_exec gives on a timeout), and exits.
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
[ "$groups" = ' ' ] && exit 0
for id in $groups; do kill -s TERM -- "-$id" 2>/dev/null; done
sleep 0.2
for id in $groups; do kill -s KILL -- "-$id" 2>/dev/null; done
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

/**
 * A reaper, started with the first command (a worker that runs none has no extra process). It never
 * keeps the worker's event loop alive. A group stays tracked after its command ended while it still
 * has processes (background children); it is forgotten once empty, checked at each new command, so
 * a process group id the system reuses later is not killed.
 */
export function createProcessReaper(): ProcessReaper {
  let input: Socket | undefined;
  const tracked = new Set<number>();
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

  return {
    track(processGroupId) {
      for (const id of tracked) {
        if (!groupAlive(id)) {
          tracked.delete(id);
          send(`-${id}`);
        }
      }
      tracked.add(processGroupId);
      send(`+${processGroupId}`);
    },
    close() {
      if (closed) return;
      closed = true;
      input?.end();
    },
  };
}
