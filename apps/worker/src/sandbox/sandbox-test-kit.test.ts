import { describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './sandbox-test-kit.ts';

// bwrap is made unavailable the real way: a PATH where it is not.
const withoutBwrap: NodeJS.ProcessEnv = { ...process.env, PATH: '/nonexistent' };

describe('the sandbox tests where bwrap cannot run', () => {
  it('skip with the reason outside CI', async () => {
    const { CI: _ci, ...env } = withoutBwrap;
    expect(await bwrapUnavailable({ env })).toContain('bwrap is not on PATH');
  });

  it('fail under CI=true, saying why', async () => {
    await expect(bwrapUnavailable({ env: { ...withoutBwrap, CI: 'true' } })).rejects.toThrow(
      /CI=true.*bwrap is not on PATH/,
    );
  });
});
