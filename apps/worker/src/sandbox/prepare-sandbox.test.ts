import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeSandbox, prepareSandbox } from './prepare-sandbox.ts';
import { bwrapUnavailable, outsideTmpDir, tempDir } from './sandbox-test-kit.ts';

const unavailable = await bwrapUnavailable();
if (unavailable !== undefined) process.stderr.write(`SKIPPED sandbox self-test tests: ${unavailable}\n`);

/** The arguments without every occurrence of `option` and its `arity` values. */
function without(option: string, arity: number, keep: (values: string[]) => boolean = () => false) {
  return (args: string[]) => {
    const kept: string[] = [];
    for (let index = 0; index < args.length; index += 1) {
      const values = args.slice(index + 1, index + 1 + arity);
      if (args[index] === option && !keep(values)) {
        index += arity;
        continue;
      }
      kept.push(args[index] as string);
    }
    return kept;
  };
}

describe('the sandbox self-test without bwrap', () => {
  it('fails saying bwrap is missing; mode on runs without the sandbox, mode required refuses', async () => {
    await using workdir = await tempDir('molf-selftest-');
    const env = { ...process.env, PATH: '/nonexistent' };
    const on = await prepareSandbox({ config: { mode: 'on' }, workdir: workdir.path, env });
    expect(on.runner).toBeUndefined();
    expect(on.status).toMatchObject({ mode: 'on', active: false, selfTest: { ok: false } });
    expect(describeSandbox(on.status)).toMatch(/^failed: .*bwrap is not installed/);
    await expect(prepareSandbox({ config: { mode: 'required' }, workdir: workdir.path, env })).rejects.toMatchObject({
      code: 'sandbox_failed',
      message: expect.stringContaining('bwrap is not installed'),
    });
  });

  it('is not run in mode off', async () => {
    await using workdir = await tempDir('molf-selftest-');
    const off = await prepareSandbox({ config: undefined, workdir: workdir.path, env: { PATH: '/nonexistent' } });
    expect(off.status).toEqual({ mode: 'off', active: false, network: true, mcp: false });
    expect(describeSandbox(off.status)).toBe('off');
  });
});

describe.skipIf(unavailable !== undefined)('the sandbox self-test with real bwrap', () => {
  let home: string;
  beforeAll(async () => {
    // A Molf home with a token in it, outside /tmp so that only the policy can hide it.
    const outside = await outsideTmpDir('molf-selftest-home-');
    home = outside.path;
    await mkdir(join(home, '.molf'));
    await writeFile(join(home, '.molf', 'credentials.json'), 'molf_c_secret');
    return () => outside[Symbol.asyncDispose]();
  });

  it('passes for the real policy, checking the write, the hidden paths, the PID namespace, capabilities and the network', async () => {
    await using workdir = await tempDir('molf-selftest-');
    const prepared = await prepareSandbox({
      config: { mode: 'required', network: false },
      workdir: workdir.path,
      env: process.env,
      home,
    });
    expect(prepared.status.selfTest?.failed).toBeUndefined();
    expect(prepared.status).toMatchObject({ mode: 'required', active: true, network: false, mcp: true });
    expect(prepared.status.selfTest?.checks.map((check) => [check.name, check.ok])).toEqual([
      ['write-outside-workdir', true],
      ['hidden-probe', true],
      ['hidden-paths', true],
      ['pid-namespace', true],
      ['capabilities', true],
      ['network-off', true],
    ]);
    expect(describeSandbox(prepared.status)).toBe('on, network off');
    expect(prepared.runner).toBeDefined();
  });

  it.each([
    ['keeps capabilities (no --cap-drop ALL)', without('--cap-drop', 1), /capabilities/],
    ['shares the PID namespace (no --unshare-pid)', without('--unshare-pid', 0), /worker's process/],
    ['leaves the network on (no --unshare-net)', without('--unshare-net', 0), /reached the host/],
    [
      'mounts the root read-write (--bind / /)',
      (args: string[]) => args.map((arg, index) => (arg === '--ro-bind' && args[index + 1] === '/' ? '--bind' : arg)),
      /write outside the workdir/,
    ],
    ['hides nothing (no --tmpfs but /tmp)', without('--tmpfs', 1, ([path]) => path === '/tmp'), /hidden/],
  ])('fails for a sandbox that %s, and mode required then refuses', async (_name, rewrite, reason) => {
    await using workdir = await tempDir('molf-selftest-');
    const config = { network: false, testOnlyRewriteArguments: rewrite };
    const on = await prepareSandbox({
      config: { ...config, mode: 'on' },
      workdir: workdir.path,
      env: process.env,
      home,
    });
    expect(on.status.active).toBe(false);
    expect(on.runner).toBeUndefined();
    expect(on.status.selfTest?.failed).toMatch(reason);
    await expect(
      prepareSandbox({ config: { ...config, mode: 'required' }, workdir: workdir.path, env: process.env, home }),
    ).rejects.toMatchObject({ code: 'sandbox_failed' });
  });
});
