/**
 * Keeps typing from answering an approval nobody saw: a key that was meant for the prompt (the `y`
 * of "your", a second `y` pressed for the approval before) must not approve the call that appears
 * under the fingers. An approval that appears while the person is typing takes keys only once
 * they have paused; one that appears to an idle keyboard takes the first key. The keys of a prompt
 * that was sent do not count: after Enter a person waits for the answer.
 */
export type ApprovalKeyGuard = {
  /** A key was pressed (any key, in any mode). */
  noteKey(): void;
  /** A prompt was sent: the keys that wrote it were not typing over what comes next. */
  sent(): void;
  /** An approval is now on the screen. */
  arm(): void;
  /** Whether a key pressed now may answer it; a key it refuses pushes the moment back. */
  accepts(): boolean;
};

/** How long the keyboard must have been still before an approval takes a key. */
export const APPROVAL_KEY_PAUSE_MS = 600;

export function createApprovalKeyGuard(now: () => number = Date.now): ApprovalKeyGuard {
  let lastKeyAt = Number.NEGATIVE_INFINITY;
  /** Keys are taken from this moment on. */
  let openAt = Number.NEGATIVE_INFINITY;
  return {
    noteKey() {
      lastKeyAt = now();
    },
    sent() {
      lastKeyAt = Number.NEGATIVE_INFINITY;
    },
    arm() {
      // Typing just before the question: wait for a pause after it.
      openAt = now() - lastKeyAt < APPROVAL_KEY_PAUSE_MS ? lastKeyAt + APPROVAL_KEY_PAUSE_MS : now();
    },
    accepts() {
      const at = now();
      if (at >= openAt) return true;
      // Still typing: the pause starts again from this key.
      openAt = at + APPROVAL_KEY_PAUSE_MS;
      return false;
    },
  };
}
