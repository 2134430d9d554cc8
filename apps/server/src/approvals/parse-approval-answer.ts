import { safeParseRuleExpiry, safeParseRulePattern } from '@molf/permissions';
import { type ApprovalScope, MAX_GRANT_DAYS, MolfError } from '@molf/protocol';

const DAY_MS = 24 * 60 * 60 * 1000;

/** What a person's "approve" asks for, checked: the edited patterns and the expiry in ms. */
export type ApprovalAnswer = {
  scope: ApprovalScope;
  /** The patterns the person edited; undefined: the approval's own. */
  patterns: string[] | undefined;
  /** When an "always" grant expires (ms since the epoch); undefined: never. */
  expiresAt: number | undefined;
};

/**
 * Checks the parts of an answer that do not depend on the approval: edited patterns only with
 * "session" or "always", each one the permissions file would take (else `invalid_input` naming
 * the pattern, before anything is saved); an expiry only with "always", later than `now` and at
 * most {@link MAX_GRANT_DAYS} days ahead. The RPC schema checks the same shapes; this is the gate's
 * own check for callers without a socket.
 */
export function parseApprovalAnswer(options: {
  scope: ApprovalScope;
  patterns?: readonly string[] | undefined;
  expiresAt?: string | undefined;
  now: number;
}): ApprovalAnswer {
  const { scope, now } = options;
  let patterns: string[] | undefined;
  if (options.patterns !== undefined) {
    if (scope === 'once' || scope === 'edits') {
      throw new MolfError(
        'invalid_input',
        `patterns are added as rules only with scope "session" or "always", not "${scope}"`,
        {
          field: 'patterns',
        },
      );
    }
    if (options.patterns.length === 0) {
      throw new MolfError('invalid_input', 'give at least one pattern, or none to take the offered ones', {
        field: 'patterns',
      });
    }
    for (const [index, pattern] of options.patterns.entries()) {
      const parsed = safeParseRulePattern(pattern);
      if (!parsed.ok) {
        throw new MolfError('invalid_input', `the pattern "${pattern}" cannot be saved: ${parsed.message}`, {
          field: `patterns.${index}`,
        });
      }
    }
    patterns = [...new Set(options.patterns)];
  }
  let expiresAt: number | undefined;
  if (options.expiresAt !== undefined) {
    if (scope !== 'always') {
      throw new MolfError('invalid_input', 'an expiry applies only to rules saved with scope "always"', {
        field: 'expiresAt',
      });
    }
    const parsed = safeParseRuleExpiry(options.expiresAt);
    if (!parsed.ok) {
      throw new MolfError(
        'invalid_input',
        `the expiry "${options.expiresAt}" is not a date and time: ${parsed.message}`,
        {
          field: 'expiresAt',
        },
      );
    }
    const latest = now + MAX_GRANT_DAYS * DAY_MS;
    if (parsed.value <= now || parsed.value > latest) {
      throw new MolfError(
        'invalid_input',
        `the expiry must lie after now (${new Date(now).toISOString()}, the server's time) and at most ` +
          `${MAX_GRANT_DAYS} days ahead (${new Date(latest).toISOString()}); it is ${new Date(parsed.value).toISOString()}`,
        { field: 'expiresAt' },
      );
    }
    expiresAt = parsed.value;
  }
  return { scope, patterns, expiresAt };
}
