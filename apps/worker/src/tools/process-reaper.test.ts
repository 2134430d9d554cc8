import { spawn } from 'node:child_process';
import { isProcessAlive } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { createProcessReaper } from './process-reaper.ts';

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A detached shell (its own process group) with a background child; resolves with both pids. */
async function startGroup(): Promise<{ leader: number; child: number }> {
  const shell = spawn('/bin/sh', ['-c', 'sleep 300 & echo $!; wait'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  shell.unref();
  const child = await new Promise<number>((resolve) =>
    shell.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString()))),
  );
  return { leader: shell.pid as number, child };
}

describe('the process reaper', () => {
  it("kills every tracked process group, background children included, when the worker's end of the pipe closes", async () => {
    const reaper = createProcessReaper();
    const first = await startGroup();
    const second = await startGroup();
    const untracked = await startGroup();
    try {
      reaper.track(first.leader);
      reaper.track(second.leader);
      reaper.close();
      await until(
        () => [first, second].every((group) => !isProcessAlive(group.leader) && !isProcessAlive(group.child)),
        'the tracked groups to end',
      );
      expect(isProcessAlive(untracked.child)).toBe(true);
    } finally {
      for (const pid of [untracked.leader, untracked.child, first.child, second.child]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone.
        }
      }
    }
  });

  it('forgets a group when its command ended and the group with it, and keeps one a background child holds', async () => {
    const reaper = createProcessReaper();
    const alone = spawn('/bin/sh', ['-c', 'exit 0'], { detached: true, stdio: 'ignore' });
    const aloneExited = new Promise((resolve) => alone.once('exit', resolve));
    const holder = await startGroup();
    try {
      reaper.track(alone.pid as number);
      reaper.track(holder.leader);
      await aloneExited;
      reaper.ended(alone.pid as number);
      expect(reaper.tracked()).toEqual([holder.leader]);
      // The leader goes, its background child stays: still tracked.
      process.kill(holder.leader, 'SIGKILL');
      await until(() => !isProcessAlive(holder.leader), 'the leader to end');
      reaper.ended(holder.leader);
      expect(reaper.tracked()).toEqual([holder.leader]);
      // Once the child is gone too, the next look forgets the group.
      process.kill(holder.child, 'SIGKILL');
      await until(() => !isProcessAlive(holder.child), 'the child to end');
      reaper.prune();
      expect(reaper.tracked()).toEqual([]);
    } finally {
      reaper.close();
      for (const pid of [holder.leader, holder.child]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone.
        }
      }
    }
  });
});
