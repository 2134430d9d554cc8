import { describe, expect, it } from 'vitest';
import { normalizeSandboxArguments } from './sandbox-options.ts';

describe('normalizeSandboxArguments', () => {
  it('reads a bare --sandbox before a prompt as --sandbox=on, so the prompt stays the prompt', () => {
    expect(normalizeSandboxArguments(['node', 'molf', 'run', '--sandbox', 'fix the tests'])).toEqual([
      'node',
      'molf',
      'run',
      '--sandbox=on',
      'fix the tests',
    ]);
  });

  it('keeps a mode that follows the flag, and the flag at the end or before another option', () => {
    expect(normalizeSandboxArguments(['run', '--sandbox', 'required', 'hi'])).toEqual([
      'run',
      '--sandbox',
      'required',
      'hi',
    ]);
    expect(normalizeSandboxArguments(['run', 'hi', '--sandbox'])).toEqual(['run', 'hi', '--sandbox']);
    expect(normalizeSandboxArguments(['up', '--sandbox', '--port', '0'])).toEqual(['up', '--sandbox', '--port', '0']);
  });

  it('leaves everything after -- alone', () => {
    expect(normalizeSandboxArguments(['run', '--', '--sandbox', 'x'])).toEqual(['run', '--', '--sandbox', 'x']);
  });
});
