import type { Logger } from '@molf/logging';
import type { PermissionRule } from '@molf/permissions';
import { z } from 'zod';
import type { StateDocuments } from '../state/index.ts';

/** What a person allowed for one session: "allow for this session" rules, and "accept edits". */
export type SessionGrant = {
  rules: PermissionRule[];
  acceptEdits: boolean;
};

/**
 * The session-scoped answers of the approval gate, kept with the server's small state (a file in the
 * data dir, or a row every server of a cluster shares): they hold for the whole session, on whichever
 * server runs its next turn, and after a restart.
 */
export type SessionGrants = {
  /** The session's grants as this server knows them now, without waiting. */
  of(sessionId: string): SessionGrant;
  /** Adds allow rules (tool and pattern) or "accept edits" to the session's grants, stored before this resolves. */
  add(
    sessionId: string,
    change: { rules?: ReadonlyArray<{ tool: string; pattern: string }>; acceptEdits?: true },
  ): Promise<void>;
  /** Forgets a deleted session's grants. */
  remove(sessionId: string): Promise<void>;
};

const StoredGrantSchema = z.object({
  rules: z.array(z.object({ tool: z.string().min(1), pattern: z.string() })),
  acceptEdits: z.boolean(),
});
type StoredGrant = z.infer<typeof StoredGrantSchema>;

const NONE: StoredGrant = { rules: [], acceptEdits: false };

/** The document of a session's grants (`session-grants/{id}.json`, in the protected data dir). */
export const sessionGrantsDocument = (sessionId: string) => `session-grants/${encodeURIComponent(sessionId)}.json`;

export function createSessionGrants(options: { documents: StateDocuments; logger: Logger }): SessionGrants {
  const { documents, logger } = options;
  /** Each document's parsed grant, by the version it was parsed at. */
  const parsed = new Map<string, { version: string; grant: SessionGrant }>();

  function parse(name: string, text: string | undefined): StoredGrant {
    if (text === undefined) return NONE;
    try {
      return StoredGrantSchema.parse(JSON.parse(text));
    } catch (error) {
      // Damaged: the session's calls are asked about again, as if nothing had been granted.
      logger.warn({ err: error, document: documents.where(name) }, 'cannot read a session’s grants: ignored');
      return NONE;
    }
  }

  return {
    of(sessionId) {
      const name = sessionGrantsDocument(sessionId);
      const { text, version } = documents.known(name);
      const cached = parsed.get(name);
      if (cached?.version === version) return cached.grant;
      const stored = parse(name, text);
      const grant: SessionGrant = {
        rules: stored.rules.map(({ tool, pattern }) => ({
          tool,
          pattern,
          action: 'allow',
          source: { layer: 'session' },
        })),
        acceptEdits: stored.acceptEdits,
      };
      if (text === undefined) parsed.delete(name);
      else parsed.set(name, { version, grant });
      return grant;
    },

    async add(sessionId, change) {
      const name = sessionGrantsDocument(sessionId);
      await documents.lock(name, async () => {
        const stored = parse(name, await documents.read(name));
        const rules = [...stored.rules];
        for (const rule of change.rules ?? []) {
          if (!rules.some((kept) => kept.tool === rule.tool && kept.pattern === rule.pattern)) {
            rules.push({ tool: rule.tool, pattern: rule.pattern });
          }
        }
        const next: StoredGrant = { rules, acceptEdits: stored.acceptEdits || change.acceptEdits === true };
        await documents.write(name, `${JSON.stringify(next, null, 2)}\n`);
      });
    },

    async remove(sessionId) {
      const name = sessionGrantsDocument(sessionId);
      parsed.delete(name);
      await documents.remove(name);
    },
  };
}
