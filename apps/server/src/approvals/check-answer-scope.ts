import { type Approval, type ApprovalScope, MolfError } from '@molf/protocol';

/**
 * Refuses (`invalid_input`, nothing saved, the approval keeps waiting) a "session" or "always"
 * answer the approval does not offer: any, when it has no patterns; and for a call that runs a
 * destructive command (the approval has an `alwaysNote`), edited patterns other than the exact
 * ones offered: a person turning `rm -rf build` into `rm *` would allow every later rm.
 */
export function checkAnswerScope(options: {
  approval: Pick<Approval, 'alwaysPatterns' | 'alwaysNote'>;
  scope: ApprovalScope;
  /** The patterns the person edited; undefined: the offered ones. */
  patterns: readonly string[] | undefined;
}): void {
  const { approval, scope, patterns } = options;
  // Other scopes ("once", and any that saves no pattern of the call) are not this check's.
  if (scope !== 'session' && scope !== 'always') return;
  if (approval.alwaysPatterns === null) {
    const why =
      approval.alwaysNote === undefined
        ? ' (no pattern could describe it safely): approve it once instead'
        : `: ${approval.alwaysNote}`;
    throw new MolfError('invalid_input', `"${scope}" is not offered for this call${why}`, { field: 'scope' });
  }
  if (approval.alwaysNote === undefined || patterns === undefined) return;
  const note = approval.alwaysNote;
  const offered = new Set(approval.alwaysPatterns);
  const index = patterns.findIndex((pattern) => !offered.has(pattern));
  if (index === -1) return;
  throw new MolfError(
    'invalid_input',
    `the pattern "${patterns[index]}" is not one this approval offers, and for this call only the offered exact ` +
      `${approval.alwaysPatterns.length === 1 ? 'pattern' : 'patterns'} (${approval.alwaysPatterns.map((pattern) => JSON.stringify(pattern)).join(', ')}) may be saved: ${note}`,
    { field: `patterns.${index}` },
  );
}
