import { describe, expect, it } from 'vitest';
import { chatInTerminal } from './chat-terminal-kit.ts';
import { useTestScope } from './cli-test-kit.ts';

const scope = useTestScope('tty-kit');

describe('a terminal a test started', () => {
  let aliveWhenCleanedUp: boolean | undefined;

  it('is still running while the test runs', async () => {
    const { terminal } = await chatInTerminal(scope, []);
    expect(await terminal.alive()).toBe(true);
    // Runs with the scope's cleanups, just before its directories (the chat's MOLF_HOME) are removed.
    scope.cleanups.push(async () => {
      aliveWhenCleanedUp = await terminal.alive();
    });
  });

  it('was stopped before the scope removed the directories it writes to', () => {
    expect(aliveWhenCleanedUp).toBe(false);
  });
});
