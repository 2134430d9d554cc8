/** Unsent prompts, per session, kept across reloads in this browser. */
const PREFIX = 'molf:draft:';

export function loadDraft(sessionId: string): string {
  try {
    return window.localStorage.getItem(PREFIX + sessionId) ?? '';
  } catch {
    return '';
  }
}

export function saveDraft(sessionId: string, text: string): void {
  try {
    if (text === '') window.localStorage.removeItem(PREFIX + sessionId);
    else window.localStorage.setItem(PREFIX + sessionId, text);
  } catch {
    // Storage full or off: the draft lasts as long as the page.
  }
}
