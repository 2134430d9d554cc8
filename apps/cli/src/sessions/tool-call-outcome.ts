/**
 * How a tool call ended, as people and scripts are told: `denied` when the approval gate refused it
 * (a rule, a person, `--on-ask`), `cancelled` when its turn ended first, `error` for any other failure.
 */
export type ToolCallOutcome = 'ok' | 'error' | 'denied' | 'cancelled';

/** The outcome of a tool result (a stored tool message, a `tool-call.ended` event). */
export function toolCallOutcome(result: {
  error?: string | undefined;
  errorKind?: string | undefined;
}): ToolCallOutcome {
  if (result.error === undefined) return 'ok';
  if (result.errorKind === 'permission_denied') return 'denied';
  if (result.errorKind === 'cancelled') return 'cancelled';
  return 'error';
}
