import type { Logger } from '@molf/logging';
import { isMolfError } from '@molf/protocol';
import { generateText } from 'ai';
import type { ModelResolver } from '../providers/resolve-model.ts';
import type { SessionEvents } from '../sessions/session-events.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import { titleFromAnswer, titleFromPrompt } from './title-text.ts';

export type SessionTitler = {
  /**
   * Names an untitled session from its first prompt, in the background: the turn does not wait for
   * it, and it never rejects, so a turn never fails because of its title. The new name is published
   * as `session.renamed`; a name a person gave meanwhile is kept. Resolves once the title is stored
   * or given up (a second call for a session being titled resolves with the first).
   */
  titleFrom(options: { sessionId: string; prompt: string }): Promise<void>;
  /** Stops the title calls in flight and waits for them to end. */
  close(): Promise<void>;
};

export type SessionTitlerOptions = {
  store: SessionStore;
  events: SessionEvents;
  models: ModelResolver;
  logger: Logger;
  /** `provider/model` that writes titles. Default none: the prompt's first words are the title. */
  titleModel?: string | undefined;
  /** A title call is given up after this, and the first words are the title. Default 30 s. */
  timeoutMs?: number;
};

/** What the title model is told; the prompt follows as the user message. */
export const TITLE_INSTRUCTIONS =
  'You name conversations between a person and an AI coding agent. Reply with a title for the ' +
  "conversation that starts with the person's message below: at most six words, plain text, in the " +
  "message's language, no quotes, no final period. Reply with the title only.";

/** The prompt enters the title request cut to this many characters: its start says what it is about. */
const MAX_PROMPT_CHARS_FOR_TITLE = 4_000;
const DEFAULT_TITLE_TIMEOUT_MS = 30_000;

/**
 * Titles sessions from their first prompt: by the configured title model when there is one (its
 * failure or silence falls back to the first words), else by the prompt's first words.
 */
export function createSessionTitler(options: SessionTitlerOptions): SessionTitler {
  const { store, events, models, logger } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TITLE_TIMEOUT_MS;
  const closing = new AbortController();
  /** Sessions being titled now: a second prompt sent at once does not start another title. */
  const inFlight = new Map<string, Promise<void>>();

  async function askModel(titleModel: string, prompt: string): Promise<string | undefined> {
    const { model } = models.resolve({ prompt: titleModel });
    const result = await generateText({
      model,
      system: TITLE_INSTRUCTIONS,
      prompt: prompt.slice(0, MAX_PROMPT_CHARS_FOR_TITLE),
      maxOutputTokens: 32,
      temperature: 0.2,
      maxRetries: 0,
      abortSignal: AbortSignal.any([closing.signal, AbortSignal.timeout(timeoutMs)]),
    });
    return titleFromAnswer(result.text);
  }

  async function title(sessionId: string, prompt: string): Promise<void> {
    // A named session costs no model call.
    if ((await store.get(sessionId))?.untitled !== true) return;
    let text: string | undefined;
    if (options.titleModel !== undefined) {
      try {
        text = await askModel(options.titleModel, prompt);
      } catch (error) {
        if (closing.signal.aborted) return;
        logger.warn(
          { err: error, sessionId, titleModel: options.titleModel },
          'the title model failed; the session is named by its first words',
        );
      }
    }
    text ??= titleFromPrompt(prompt);
    if (text === undefined || closing.signal.aborted) return;
    const session = await store.update(sessionId, { title: text });
    // Another name (a person's, given meanwhile) stays, and then nothing changed.
    if (session.name === text) events.publish(sessionId, { type: 'session.renamed', name: text });
  }

  return {
    titleFrom({ sessionId, prompt }) {
      if (closing.signal.aborted) return Promise.resolve();
      const titling = inFlight.get(sessionId);
      if (titling !== undefined) return titling;
      const running = title(sessionId, prompt)
        .catch((error: unknown) => {
          // The session was deleted meanwhile (a `molf run` whose prompt failed): nothing to name.
          if (isMolfError(error) && error.code === 'session_not_found') return;
          logger.warn({ err: error, sessionId }, 'cannot store the title of a session');
        })
        .finally(() => inFlight.delete(sessionId));
      inFlight.set(sessionId, running);
      return running;
    },
    async close() {
      closing.abort();
      await Promise.all(inFlight.values());
    },
  };
}
