import { describe, expect, it } from 'vitest';
import { sandboxUnavailable } from './cli-test-kit.ts';

// The sandbox is made unavailable the real way: a PATH where bwrap is not.
const withoutBwrap: NodeJS.ProcessEnv = { ...process.env, PATH: '/nonexistent' };

describe('the CLI sandbox tests where the sandbox cannot run', () => {
  it('skip with the reason outside CI', async () => {
    const { CI: _ci, ...env } = withoutBwrap;
    expect(await sandboxUnavailable({ env })).toContain('bwrap is not installed');
  });

  it('fail under CI=true, saying why', async () => {
    await expect(sandboxUnavailable({ env: { ...withoutBwrap, CI: 'true' } })).rejects.toThrow(
      /CI=true.*bwrap is not installed/,
    );
  });
});
