import { describe, expect, it } from 'vitest';
import { createSandboxRunner } from './create-sandbox-runner.ts';
import { detectSandboxRefusal } from './detect-sandbox-refusal.ts';
import { toSandboxSettings } from './sandbox-config.ts';

const workdir = '/work/project';
/** What the sandbox of a worker on /work/project lets a command write (no sandbox is started). */
const runner = createSandboxRunner({
  bwrap: '/usr/bin/bwrap',
  settings: toSandboxSettings({ mode: 'required', writable: ['~/.npm'] }, { workdir, env: {}, home: '/home/me' }),
});
const detect = (output: string, exitCode: number, network: boolean, cwd = workdir) =>
  detectSandboxRefusal({ output, exitCode, network, cwd, canWrite: runner.canWrite });

describe('sandbox refusals in a command output', () => {
  it.each([
    ['touch: cannot touch /etc/x: Read-only file system', 1, true, { type: 'read_only' }],
    ['/bin/bash: line 1: /etc/x: Read-only file system', 1, true, { type: 'read_only' }],
    ['mkdir: cannot create directory ‘/opt/newdir’: Read-only file system', 1, true, { type: 'read_only' }],
    ["OSError: [Errno 30] Read-only file system: '/etc/x'", 1, true, { type: 'read_only' }],
    ["Error: EROFS: read-only file system, open '/home/me/.cache/x'", 1, true, { type: 'read_only' }],
    ['go: creating work dir: mkdir /usr/local/go/tmp: read-only file system', 1, true, { type: 'read_only' }],
    // Relative to the command's directory: a protected file of the workdir.
    ["touch: cannot touch '.git/hooks/x': Read-only file system", 1, true, { type: 'read_only' }],
    ['error: could not lock config file .git/config: Read-only file system', 255, true, { type: 'read_only' }],
    [
      'npm error code EROFS\nnpm error syscall mkdir\nnpm error path /usr/lib/node_modules/x\nnpm error errno -30',
      1,
      true,
      { type: 'read_only' },
    ],
    // The path a line or two before the message (Rust's "Caused by").
    [
      'error: failed to open: /root/.cargo/.package-cache\n\nCaused by:\n  Read-only file system (os error 30)',
      101,
      true,
      { type: 'read_only' },
    ],
    ['curl: (6) Could not resolve host: example.com', 6, false, { type: 'network' }],
    ['Error: getaddrinfo EAI_AGAIN registry.npmjs.org', 1, false, { type: 'network' }],
    ['connect ECONNREFUSED 127.0.0.1:5432', 1, false, { type: 'network' }],
    [
      "bwrap: Can't mkdir parents for /x: Read-only file system",
      1,
      true,
      {
        type: 'setup',
        message: "bwrap: Can't mkdir parents for /x: Read-only file system",
      },
    ],
  ])('%j (exit %d, network %s) is %j', (output, exitCode, network, refusal) => {
    expect(detect(output, exitCode, network)).toEqual(refusal);
  });

  it.each([
    ['a zero exit that prints the words', 'log: Read-only file system', 0, true],
    ['network errors while the network is on', 'curl: (7) Failed to connect: Connection refused', 7, true],
    ['an ordinary failure', 'error TS2322: Type string is not assignable', 2, false],
    ['a missing file', 'cat: missing-file: No such file or directory', 1, true],
    ['a write under /proc', "touch: cannot touch '/proc/x': No such file or directory", 1, true],
    // The sandbox lets these be written: whatever said "read-only", it was not the sandbox.
    [
      'a failing test that prints the words about a workdir file',
      "FAIL handles EROFS: read-only file system, open '/work/project/data/x'",
      1,
      true,
    ],
    ['a relative path the command may write', 'data/out.json: Read-only file system', 1, true],
    ['a path in the private /tmp', "OSError: [Errno 30] Read-only file system: '/tmp/x'", 1, true],
    ['a configured writable path', "Error: EROFS: read-only file system, mkdir '/home/me/.npm/_cacache'", 1, true],
    ['the words and no path at all', 'Read-only file system', 1, true],
    ['a command printing what bwrap would, among other output', 'bwrap: usage\nsee bwrap --help', 1, true],
  ])('is nothing for %s', (_name, output, exitCode, network) => {
    expect(detect(output, exitCode, network)).toBeUndefined();
  });

  it("takes bwrap's status over the output: a command that started never failed to start", () => {
    const base = { exitCode: 1, network: true, cwd: workdir, canWrite: runner.canWrite };
    expect(detectSandboxRefusal({ ...base, output: 'bwrap: not really', started: true })).toBeUndefined();
    expect(
      detectSandboxRefusal({
        ...base,
        output: "bwrap: Can't find source path /x: No such file or directory",
        started: false,
      }),
    ).toEqual({ type: 'setup', message: "bwrap: Can't find source path /x: No such file or directory" });
  });
});
