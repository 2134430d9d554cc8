import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { isProcessAlive } from './is-process-alive.ts';
import { stopProcessGroup } from './stop-process-group.ts';

/** Resolves once `predicate` holds; the deadline is generous so a loaded machine can't fail it. */
async function waitUntil(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('stopProcessGroup', () => {
  it('ends the leader and the children it started, also ones that ignore SIGTERM', async () => {
    // The shell ignores SIGTERM, and so does the sleep it leaves running in the background.
    const leader = spawn('sh', ['-c', 'trap "" TERM; sleep 1000 & echo $!; wait'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = once(leader, 'exit');
    const [chunk] = (await once(leader.stdout, 'data')) as [Buffer];
    const grandchild = Number(chunk.toString().trim());
    expect(isProcessAlive(grandchild)).toBe(true);

    await stopProcessGroup({ pid: leader.pid, exited, graceMs: 100 });

    expect(leader.exitCode !== null || leader.signalCode !== null).toBe(true);
    // SIGKILL is delivered at once, but the kernel reaps the orphan in its own time.
    await waitUntil(() => !isProcessAlive(grandchild), 'the background child to end');
  });

  it('ends the children left behind by a leader that already exited', async () => {
    const leader = spawn('sh', ['-c', 'sleep 1000 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = once(leader, 'exit');
    const [chunk] = (await once(leader.stdout, 'data')) as [Buffer];
    const orphan = Number(chunk.toString().trim());
    await exited;
    expect(isProcessAlive(orphan)).toBe(true);

    await stopProcessGroup({ pid: leader.pid, exited });

    await waitUntil(() => !isProcessAlive(orphan), 'the orphaned child to end');
  });
});
