import { createContext, useContext } from 'solid-js';
import type { ServerLink } from '../link/server-link.ts';

/** What a session's parts need to read more from the server: the link and the session. */
export type SessionContextValue = { link: ServerLink; sessionId: string };

export const SessionContext = createContext<SessionContextValue>();

export function useSession(): SessionContextValue | undefined {
  return useContext(SessionContext);
}
