import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { handTokensToChild, receiveTokensFromParent, TOKENS_FROM_PARENT_ENV } from './token-handover.ts';

const CHILD = fileURLToPath(new URL('./testing/token-handover-child.ts', import.meta.url));

describe('token handover from molf up to its children', () => {
  it('hands the tokens over the IPC channel once, to a child that asks', async () => {
    // As `molf up` starts its children: node's fork with an IPC channel.
    const child = fork(CHILD, [], {
      env: { ...process.env, [TOKENS_FROM_PARENT_ENV]: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    // No time limit of its own (a loaded machine is slow), but it never outlives the test.
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    const received: unknown[] = [];
    child.on('message', (message) => received.push(message));
    handTokensToChild(child, { worker: 'molf_w_handed-over-token-value' });
    await once(child, 'exit');
    const messages = received.filter((message) => (message as { type?: string }).type !== 'tokens.request');
    expect(messages).toEqual([
      // The variable is gone, so the child's own children would not wait for a parent's tokens.
      { type: 'received', tokens: { worker: 'molf_w_handed-over-token-value' }, variableLeft: null },
      // A second request is never answered.
      { type: 'again', outcome: 'timeout' },
    ]);
  });

  it('does not wait for a parent when the process was started by hand', async () => {
    expect(process.env[TOKENS_FROM_PARENT_ENV]).toBeUndefined();
    expect(await receiveTokensFromParent()).toBeUndefined();
  });
});
