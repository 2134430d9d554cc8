import { describe, expect, it } from 'vitest';
import { detectSandboxRefusal } from './detect-sandbox-refusal.ts';

describe('sandbox refusals in a command output', () => {
  it.each([
    ['touch: cannot touch /etc/x: Read-only file system', 1, true, { type: 'read_only' }],
    ['npm error code EROFS\nnpm error syscall mkdir', 1, true, { type: 'read_only' }],
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
    expect(detectSandboxRefusal({ output, exitCode, network })).toEqual(refusal);
  });

  it.each([
    ['a zero exit that prints the words', 'log: Read-only file system', 0, true],
    ['network errors while the network is on', 'curl: (7) Failed to connect: Connection refused', 7, true],
    ['an ordinary failure', 'error TS2322: Type string is not assignable', 2, false],
  ])('is nothing for %s', (_name, output, exitCode, network) => {
    expect(detectSandboxRefusal({ output, exitCode, network })).toBeUndefined();
  });
});
