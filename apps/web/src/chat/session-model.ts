import {
  applyTranscriptEvent,
  createTranscript,
  followSession,
  type SessionTranscript,
  withStoredMessages,
} from '@molf/client';
import type { SessionInfo } from '@molf/protocol';
import { type Accessor, batch, createSignal } from 'solid-js';
import { errorCode, errorMessage } from '../link/rpc-error.ts';
import type { ServerLink } from '../link/server-link.ts';

export type SessionModel = {
  sessionId: string;
  info: Accessor<SessionInfo | undefined>;
  transcript: Accessor<SessionTranscript>;
  busy: Accessor<boolean>;
  /** The last page of the stored messages is loaded. */
  loaded: Accessor<boolean>;
  /** Older stored messages exist than the transcript shows (`loadOlder` reads the page before). */
  hasOlder: Accessor<boolean>;
  loadOlder(): Promise<void>;
  /** Set when the session was deleted (here or in another client) or cannot be read. */
  problem: Accessor<{ type: 'deleted' | 'error'; message: string } | undefined>;
  prompt(text: string, model?: string): Promise<{ queued: boolean }>;
  abort(): Promise<void>;
  /** Stops following (the tab was closed). */
  dispose(): void;
};

/** Messages read per page: a session opens with its last page, whatever its length. */
export const HISTORY_PAGE = 100;

/**
 * One open session: its stored messages (the last page, older ones as the reader asks), then every event from the running turn's start on, in
 * one transcript (the shared one of @molf/client, so nothing is shown twice). After the link comes
 * back the tRPC client resumes the events from the last one seen; when the server no longer keeps
 * them (`session.resync`) the stored messages are read again.
 */
export function openSession(link: ServerLink, sessionId: string): SessionModel {
  const [info, setInfo] = createSignal<SessionInfo>();
  const [transcript, setTranscript] = createSignal<SessionTranscript>(createTranscript());
  const [busy, setBusy] = createSignal(false);
  const [loaded, setLoaded] = createSignal(false);
  const [problem, setProblem] = createSignal<{ type: 'deleted' | 'error'; message: string }>();
  let disposed = false;

  /** Deltas arrive up to hundreds a second: the transcript is updated once per frame at most. */
  let queued: Parameters<typeof applyTranscriptEvent>[1][] = [];
  let frame: number | undefined;
  const flush = () => {
    frame = undefined;
    const events = queued;
    queued = [];
    if (events.length > 0) setTranscript((current) => events.reduce(applyTranscriptEvent, current));
  };

  /** Which part of the history the transcript holds: messages `start` to the end of `total`. */
  let range: { start: number; total: number } | undefined;
  const [hasOlder, setHasOlder] = createSignal(false);
  let readingOlder: Promise<void> | undefined;

  const failed = (error: unknown) => {
    if (disposed) return;
    setProblem(
      errorCode(error) === 'session_not_found'
        ? { type: 'deleted', message: 'This session was deleted (in another tab or client).' }
        : { type: 'error', message: errorMessage(error) },
    );
  };

  /** Reads the last page again, as far back as what is shown (after a resync, the session deleted). */
  const load = async () => {
    try {
      const limit = range === undefined ? HISTORY_PAGE : range.total - range.start + HISTORY_PAGE;
      const page = await link.client.rpc.sessions.get.query({ sessionId, limit });
      if (disposed) return;
      flush();
      // Many messages came while events were missed: what is shown before them would land after the page.
      const covered = range === undefined || page.start <= range.start;
      range = { start: page.start, total: page.total };
      batch(() => {
        setInfo(page.session);
        setTranscript((current) => withStoredMessages(covered ? current : { ...current, items: [] }, page.messages));
        setHasOlder(page.start > 0);
        setLoaded(true);
      });
    } catch (error) {
      failed(error);
    }
  };

  const loadOlder = () => {
    readingOlder ??= (async () => {
      try {
        if (range === undefined || range.start === 0) return;
        const page = await link.client.rpc.sessions.get.query({ sessionId, limit: HISTORY_PAGE, before: range.start });
        if (disposed) return;
        range = { start: page.start, total: range.total };
        batch(() => {
          setTranscript((current) => withStoredMessages(current, page.messages));
          setHasOlder(page.start > 0);
        });
      } catch (error) {
        failed(error);
      } finally {
        readingOlder = undefined;
      }
    })();
    return readingOlder;
  };

  const follower = followSession(link.client, {
    sessionId,
    fromTurnStart: true,
    onEvent: (event, state) => {
      setBusy(state.busy);
      if (event.type === 'session.resync') {
        void load();
        return;
      }
      queued.push(event);
      // A hidden tab gets no animation frames: it still keeps up, less often.
      frame ??= document.hidden ? window.setTimeout(flush, 250) : requestAnimationFrame(flush);
    },
    // The stream ends when the session is deleted: reading it again says so.
    onEnded: () => void load(),
    onError: (error) => {
      if (errorCode(error) === 'session_not_found') {
        setProblem({ type: 'deleted', message: 'This session was deleted (in another tab or client).' });
      }
    },
  });
  void load();

  return {
    sessionId,
    info,
    transcript,
    busy,
    loaded,
    hasOlder,
    loadOlder,
    problem,
    async prompt(text, model) {
      const answer = await link.client.rpc.sessions.prompt.mutate({
        sessionId,
        text,
        ...(model === undefined || model === '' ? {} : { model }),
      });
      return { queued: answer.queued };
    },
    async abort() {
      await link.client.rpc.sessions.abort.mutate({ sessionId });
    },
    dispose() {
      disposed = true;
      follower.stop();
      if (frame !== undefined) {
        cancelAnimationFrame(frame);
        clearTimeout(frame);
      }
    },
  };
}
