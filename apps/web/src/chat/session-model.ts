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
  /** The stored messages are loaded (the transcript is complete). */
  loaded: Accessor<boolean>;
  /** Set when the session was deleted (here or in another client) or cannot be read. */
  problem: Accessor<{ type: 'deleted' | 'error'; message: string } | undefined>;
  prompt(text: string, model?: string): Promise<{ queued: boolean }>;
  abort(): Promise<void>;
  /** Stops following (the tab was closed). */
  dispose(): void;
};

/**
 * One open session: its stored messages, then every event from the running turn's start on, in
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

  const load = async () => {
    try {
      const { session, messages } = await link.client.rpc.sessions.get.query({ sessionId });
      if (disposed) return;
      flush();
      batch(() => {
        setInfo(session);
        setTranscript((current) => withStoredMessages(current, messages));
        setLoaded(true);
      });
    } catch (error) {
      if (disposed) return;
      setProblem(
        errorCode(error) === 'session_not_found'
          ? { type: 'deleted', message: 'This session was deleted (in another tab or client).' }
          : { type: 'error', message: errorMessage(error) },
      );
    }
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
