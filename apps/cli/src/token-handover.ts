import type { ChildProcess } from 'node:child_process';
import { type Kind, MolfError } from '@molf/protocol';

/**
 * Set by `molf up` in a child's environment: the child gets its tokens over the IPC channel. The
 * variable says only where to look; the tokens themselves never enter an environment or a command
 * line, where any process of the same user could read them (`/proc/<pid>/environ`, `ps`).
 */
export const TOKENS_FROM_PARENT_ENV = 'MOLF_TOKENS_FROM_PARENT';

/** The tokens `molf up` hands to a child: both to the server, the worker's own to the worker. */
export type HandedTokens = Partial<Record<Kind, string>>;

type TokensRequest = { type: 'tokens.request' };
type TokensMessage = { type: 'tokens'; tokens: HandedTokens };

function isTokensRequest(message: unknown): message is TokensRequest {
  return (message as { type?: unknown } | undefined)?.type === 'tokens.request';
}

function isTokensMessage(message: unknown): message is TokensMessage {
  const candidate = message as { type?: unknown; tokens?: unknown } | undefined;
  return candidate?.type === 'tokens' && typeof candidate.tokens === 'object' && candidate.tokens !== null;
}

/**
 * In `molf up`: answers the child's request for its tokens, once. The child asks only after it
 * listens, so the answer cannot be lost to a child still loading. A child that exits without
 * asking simply never gets them.
 */
export function handTokensToChild(child: Pick<ChildProcess, 'on' | 'off' | 'send'>, tokens: HandedTokens): void {
  const onMessage = (message: unknown) => {
    if (!isTokensRequest(message)) return;
    child.off('message', onMessage);
    // With a callback a failed send is no 'error' event: a child gone before the answer arrives
    // simply never gets it, and its exit is reported where `up` waits for it.
    child.send({ type: 'tokens', tokens } satisfies TokensMessage, () => {});
  };
  child.on('message', onMessage);
}

/**
 * In a child of `molf up`: the tokens the parent hands over, or undefined when this process was
 * not started that way (by hand, with flags or files).
 */
export async function receiveTokensFromParent(options: { timeoutMs?: number } = {}): Promise<HandedTokens | undefined> {
  if (process.env[TOKENS_FROM_PARENT_ENV] !== '1') return undefined;
  // Processes this one starts must not wait for tokens from a parent that is not theirs.
  delete process.env[TOKENS_FROM_PARENT_ENV];
  const send = process.send?.bind(process);
  if (send === undefined) {
    throw new MolfError('internal', `${TOKENS_FROM_PARENT_ENV} is set but there is no channel to a parent`);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise<HandedTokens>((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      process.off('disconnect', onDisconnect);
    };
    const onMessage = (message: unknown) => {
      if (!isTokensMessage(message)) return;
      stop();
      resolve(message.tokens);
    };
    const onDisconnect = () => {
      stop();
      reject(new MolfError('internal', 'the channel to molf up closed before it handed over the tokens'));
    };
    const timer = setTimeout(() => {
      stop();
      reject(new MolfError('timeout', `molf up did not hand over the tokens within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    process.on('message', onMessage);
    process.on('disconnect', onDisconnect);
    send({ type: 'tokens.request' } satisfies TokensRequest);
  });
}
