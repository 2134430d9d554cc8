import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { findTestProcesses, TEST_RUN_ENV } from './find-test-processes.ts';
import { stopProcessGroup } from './stop-process-group.ts';

describe('findTestProcesses', () => {
  it("finds a live process carrying this run's marker, and not one of another run or after it ended", async () => {
    const runId = randomUUID();
    const start = (marker: string) => {
      const child = spawn('sleep', ['300'], {
        detached: true,
        stdio: 'ignore',
        env: { ...process.env, [TEST_RUN_ENV]: marker },
      });
      const exited = once(child, 'exit');
      onTestFinished(() => stopProcessGroup({ pid: child.pid, exited }));
      return { child, exited };
    };
    const ours = start(runId);
    start(randomUUID());
    await once(ours.child, 'spawn');

    expect(await findTestProcesses({ runId })).toEqual([{ pid: ours.child.pid, command: 'sleep 300' }]);
    expect(await findTestProcesses({ runId, except: /^sleep / })).toEqual([]);

    await stopProcessGroup({ pid: ours.child.pid, exited: ours.exited });
    expect(await findTestProcesses({ runId })).toEqual([]);
  });
});
