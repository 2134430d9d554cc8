import { createContext, useContext } from 'solid-js';
import type { ServerLink } from '../link/server-link.ts';

/** What a session's parts need to read more from the server: the link and the session. */
export type SessionContextValue = {
  link: ServerLink;
  sessionId: string;
  /** A scheduled prompt's name by its job id, when the page knows it (default: none known). */
  jobName?: (jobId: string) => string | undefined;
};

export const SessionContext = createContext<SessionContextValue>();

export function useSession(): SessionContextValue | undefined {
  return useContext(SessionContext);
}
