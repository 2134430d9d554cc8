import { z } from 'zod';

/** No control characters (NUL, line breaks, ESC…): text that is shown on one line, in terminals too. */
export const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

/**
 * A name a person or a program gives (a session's, a worker's, a cron job's): trimmed, 1 to `max`
 * characters, none of them a control character, so that it prints as one line and cannot move a
 * terminal's cursor or colour what follows it. `what` names it in the error (`a worker name`).
 */
export function oneLineName(what: string, max: number) {
  return z.string().trim().min(1).max(max).regex(NO_CONTROL_CHARACTERS, `${what} holds no control characters`);
}

/** `text` with each control character replaced by `?`: a name made from something else (a directory's). */
export function printableName(text: string): string {
  return text.replace(/\p{Cc}/gu, '?');
}
