import { MolfError, type Role, roleAllows } from '@molf/protocol';

/**
 * Stops `molf chat` and `molf run` at their start, before they make anything, when the credential
 * cannot prompt: a viewer reads sessions only, and a worker credential serves a worker. Says what
 * to ask for instead.
 */
export function assertMayPrompt(role: Role): void {
  if (roleAllows(role, 'operator')) return;
  const ask = 'ask an admin for an operator credential (molf pair --role operator)';
  throw new MolfError(
    'forbidden',
    role === 'viewer'
      ? `this credential is a viewer: it can read sessions but not prompt; ${ask}`
      : `this credential is a worker's: it serves a worker and cannot prompt; ${ask}`,
  );
}
