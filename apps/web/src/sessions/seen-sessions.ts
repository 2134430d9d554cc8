/** When this browser last saw each session, to mark sessions changed since as unread. */
const KEY = 'molf:seen';
let seen: Record<string, string> | undefined;

function load(): Record<string, string> {
  if (seen !== undefined) return seen;
  try {
    seen = JSON.parse(window.localStorage.getItem(KEY) ?? '{}') as Record<string, string>;
  } catch {
    seen = {};
  }
  return seen;
}

export function markSeen(sessionId: string, at: string): void {
  const all = load();
  if ((all[sessionId] ?? '') >= at) return;
  all[sessionId] = at;
  try {
    window.localStorage.setItem(KEY, JSON.stringify(all));
  } catch {
    // Full storage: unread markers are a convenience.
  }
}

/** Whether a session changed since this browser last showed it (a session never opened is not unread). */
export function isUnread(sessionId: string, updatedAt: string): boolean {
  const at = load()[sessionId];
  return at !== undefined && at < updatedAt;
}
