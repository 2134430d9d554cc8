import type { FileDiff, SessionEvent, SessionMessage, StoredAttachment, ToolFullOutput } from '@molf/protocol';

/** A tool call as a client shows it: what was asked, how it runs, how it ended. */
export type TranscriptToolCall = {
  kind: 'tool';
  key: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  status: 'running' | 'done' | 'failed' | 'cancelled';
  output?: string;
  error?: string;
  errorKind?: string;
  truncated?: boolean;
  /** Where the whole output of a cut result is kept (`sessions.toolOutput` reads it). */
  fullOutput?: ToolFullOutput;
  attachments?: StoredAttachment[];
  /** What an edit_file or write_file call changed, as its worker diffed the file before and after. */
  diff?: FileDiff;
  /** When it started and ended, as the events say (absent for calls loaded from the history). */
  startedAt?: string;
  endedAt?: string;
  /** A `task` call's subagent: its own transcript, nested under the call. */
  subagent?: { agent: string; childSessionId?: string; items: TranscriptItem[] };
};

export type TranscriptItem =
  | {
      kind: 'user';
      key: string;
      text: string;
      at: string;
      /** Set when a cron job's run sent the prompt (not a person): the job's id. */
      cronJobId?: string;
    }
  | {
      kind: 'assistant';
      key: string;
      text: string;
      at: string;
      model?: string;
      /** Text still streaming: the message is not complete yet. */
      streaming: boolean;
      /** The answer was cut short (abort, provider error). */
      interrupted?: boolean;
      /**
       * Set on text that streamed: the same from its first delta to its completed message, while
       * `key` changes (the stream's, then the message's id). A client that keys its view by it
       * draws nothing anew when the answer completes.
       */
      streamId?: string;
    }
  | TranscriptToolCall
  | { kind: 'summary'; key: string; text: string; at: string }
  | { kind: 'notice'; key: string; level: 'error' | 'info'; text: string; at: string };

/**
 * One session's conversation as clients show it, built from the stored messages and the live
 * events (the web page; the CLI's chat prints the same events). Idempotent by id: a message or a
 * tool call that arrives both from the history and from an event replayed after a reload is shown
 * once.
 */
export type SessionTranscript = {
  items: TranscriptItem[];
  /** The turn running now, from its `turn.started` to its `turn.ended`. */
  turn: { turnId: string; model: string; startedAt: string } | undefined;
  /** Prompts waiting behind the running turn. */
  queued: number;
};

export function createTranscript(): SessionTranscript {
  return { items: [], turn: undefined, queued: 0 };
}

const TURN_END_NOTES: Record<string, string> = {
  aborted: 'Stopped.',
  error: 'The turn ended with an error.',
  step_limit: 'The turn reached its step limit.',
  doom_loop: 'The turn was stopped: the same call kept repeating.',
};

function toolResultFields(result: {
  output: string;
  error?: string | undefined;
  errorKind?: string | undefined;
  truncated?: boolean | undefined;
  fullOutput?: ToolFullOutput | undefined;
  attachments?: StoredAttachment[] | undefined;
  diff?: FileDiff | undefined;
}): Partial<TranscriptToolCall> {
  return {
    ...(result.diff === undefined ? {} : { diff: result.diff }),
    ...(result.fullOutput === undefined ? {} : { fullOutput: result.fullOutput }),
    ...(result.attachments === undefined ? {} : { attachments: result.attachments }),
    status: result.error === undefined ? 'done' : result.errorKind === 'cancelled' ? 'cancelled' : 'failed',
    output: result.output,
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(result.errorKind === undefined ? {} : { errorKind: result.errorKind }),
    ...(result.truncated === undefined ? {} : { truncated: result.truncated }),
  };
}

function findIndex(items: readonly TranscriptItem[], key: string): number {
  // What changes is nearly always recent: search from the end.
  for (let index = items.length - 1; index >= 0; index -= 1) if (items[index]?.key === key) return index;
  return -1;
}

/** The items with the one at `index` replaced (or `item` appended when `index` is -1). */
function put(items: readonly TranscriptItem[], index: number, item: TranscriptItem): TranscriptItem[] {
  const next = items.slice();
  if (index === -1) next.push(item);
  else next[index] = item;
  return next;
}

function toolItem(call: { toolCallId: string; toolName: string; args: Record<string, unknown> }): TranscriptToolCall {
  return { kind: 'tool', key: call.toolCallId, ...call, status: 'running' };
}

type Message<Role extends SessionMessage['role']> = Extract<SessionMessage, { role: Role }>;

/** A stored message's own item (its tool calls aside); undefined for an assistant message with nothing to show. */
function messageItem(message: Message<'user' | 'summary' | 'assistant'>): TranscriptItem | undefined {
  switch (message.role) {
    case 'user':
      return {
        kind: 'user',
        key: message.id,
        text: message.text,
        at: message.at,
        ...(message.cronJobId === undefined ? {} : { cronJobId: message.cronJobId }),
      };
    case 'summary':
      return { kind: 'summary', key: message.id, text: message.text, at: message.at };
    case 'assistant':
      if (message.text === '' && message.interrupted !== true) return undefined;
      return {
        kind: 'assistant',
        key: message.id,
        text: message.text,
        at: message.at,
        model: message.model,
        streaming: false,
        ...(message.interrupted === true ? { interrupted: true } : {}),
      };
  }
}

/** A call's card once its stored result is in. */
function withResult(before: TranscriptToolCall | undefined, message: Message<'tool'>): TranscriptToolCall {
  const call = before ?? toolItem({ toolCallId: message.toolCallId, toolName: message.toolName, args: {} });
  return { ...call, ...toolResultFields(message) };
}

/** The items after one stored message; a message already shown is replaced, never repeated. */
function withMessage(items: TranscriptItem[], message: SessionMessage, streamKey?: string): TranscriptItem[] {
  if (message.role === 'tool') {
    const index = findIndex(items, message.toolCallId);
    return put(items, index, withResult(index === -1 ? undefined : (items[index] as TranscriptToolCall), message));
  }
  const item = messageItem(message);
  let next = items;
  const known = findIndex(next, message.id);
  const streamed = streamKey === undefined ? -1 : findIndex(next, streamKey);
  if (item !== undefined && known !== -1) {
    next = put(next, known, item);
    if (streamed !== -1) next = next.filter((_, index) => index !== streamed);
  } else if (item !== undefined) {
    // A message that completes a streamed text takes its place (and its stream's id).
    const before = next[streamed];
    next = put(
      next,
      streamed,
      item.kind === 'assistant' && before?.kind === 'assistant' && before.streamId !== undefined
        ? { ...item, streamId: before.streamId }
        : item,
    );
  } else if (streamed !== -1) {
    next = next.filter((_, index) => index !== streamed);
  }
  if (message.role === 'assistant') {
    for (const call of message.toolCalls) {
      if (findIndex(next, call.toolCallId) === -1) next = put(next, -1, toolItem(call));
    }
  }
  return next;
}

/**
 * The transcript of stored messages (what `sessions.get` returns), oldest first. Built in one pass
 * over a list of its own (a long history must open fast): each message adds its items, and a tool
 * result fills its call's card.
 */
export function transcriptFromMessages(messages: readonly SessionMessage[]): SessionTranscript {
  const items: TranscriptItem[] = [];
  const positions = new Map<string, number>();
  const add = (item: TranscriptItem) => {
    const known = positions.get(item.key);
    if (known === undefined) {
      positions.set(item.key, items.length);
      items.push(item);
    } else {
      items[known] = item;
    }
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const known = positions.get(message.toolCallId);
      add(withResult(known === undefined ? undefined : (items[known] as TranscriptToolCall), message));
      continue;
    }
    const item = messageItem(message);
    if (item !== undefined) add(item);
    if (message.role === 'assistant') {
      for (const call of message.toolCalls) if (!positions.has(call.toolCallId)) add(toolItem(call));
    }
  }
  return { items, turn: undefined, queued: 0 };
}

/**
 * The transcript after stored messages were (re)loaded: a page of the history (`sessions.get`)
 * replaces what was shown of its messages. What was shown before the first of them stays before
 * it (older pages), the rest after it (a live turn's text, a message the read missed), so an
 * older page with nothing in common goes first.
 */
export function withStoredMessages(
  transcript: SessionTranscript,
  messages: readonly SessionMessage[],
): SessionTranscript {
  const stored = transcriptFromMessages(messages).items;
  const storedKeys = new Set(stored.map((item) => item.key));
  const firstShared = transcript.items.findIndex((item) => storedKeys.has(item.key));
  const before = firstShared === -1 ? [] : transcript.items.slice(0, firstShared);
  const after = transcript.items.slice(Math.max(0, firstShared)).filter((item) => !storedKeys.has(item.key));
  return { ...transcript, items: [...before, ...stored, ...after] };
}

/** The key of the text a turn is streaming (replaced by the message once it is complete). */
function streamKeyOf(turnId: string): string {
  return `stream:${turnId}`;
}

/** The transcript after one event (pure; the transcript given is not changed). */
export function applyTranscriptEvent(transcript: SessionTranscript, event: SessionEvent): SessionTranscript {
  const { items } = transcript;
  switch (event.type) {
    case 'turn.started': {
      // A turn still open was cut off (its server died or lost the session): its text stops here.
      // Its running calls stay as they are: the turn that starts now finishes them.
      const open = transcript.turn;
      const sealed = open === undefined || open.turnId === event.turnId ? items : sealStream(items, open.turnId, true);
      const withPrompt =
        event.prompt === undefined || findIndex(sealed, event.messageId) !== -1
          ? sealed
          : put(sealed, -1, {
              kind: 'user',
              key: event.messageId,
              text: event.prompt,
              at: event.at,
              ...(event.cronJobId === undefined ? {} : { cronJobId: event.cronJobId }),
            });
      return {
        items: withPrompt,
        turn: { turnId: event.turnId, model: event.model, startedAt: event.at },
        // Each turn after the first of a run is a queued prompt's.
        queued: Math.max(0, transcript.queued - 1),
      };
    }
    case 'message.queued':
      return { ...transcript, queued: Math.max(transcript.queued, event.position) };
    case 'message.delta': {
      const key = streamKeyOf(event.turnId);
      const index = findIndex(items, key);
      const before = index === -1 ? undefined : items[index];
      const streamed = before?.kind === 'assistant' ? before : undefined;
      return {
        ...transcript,
        items: put(items, index, {
          kind: 'assistant',
          key,
          text: (streamed?.text ?? '') + event.text,
          at: streamed?.at ?? event.at,
          streaming: true,
          streamId: streamed?.streamId ?? `${key}@${event.seq}`,
        }),
      };
    }
    case 'message.completed':
      return { ...transcript, items: withMessage(items, event.message, streamKeyOf(event.turnId)) };
    case 'tool-call.started': {
      const index = findIndex(items, event.toolCallId);
      const before = index === -1 ? toolItem(event) : (items[index] as TranscriptToolCall);
      // A call replayed after its result came from the history keeps its result.
      const started: TranscriptToolCall = { ...before, args: event.args, startedAt: before.startedAt ?? event.at };
      // The text streamed before a call ends its message: later text starts a new one.
      const next = put(items, index, started);
      return { ...transcript, items: sealStream(next, event.turnId) };
    }
    case 'tool-call.ended': {
      const index = findIndex(items, event.toolCallId);
      const before = index === -1 ? toolItem({ ...event, args: {} }) : (items[index] as TranscriptToolCall);
      return {
        ...transcript,
        items: put(items, index, { ...before, ...toolResultFields(event), endedAt: event.at }),
      };
    }
    case 'error':
      return {
        ...transcript,
        items: put(items, -1, {
          kind: 'notice',
          key: `error:${event.seq}:${event.at}`,
          level: 'error',
          text: event.message,
          at: event.at,
        }),
      };
    case 'turn.ended': {
      let next = sealStream(items, event.turnId, event.reason !== 'completed');
      if (event.reason !== 'completed') {
        next = next.map((item) =>
          item.kind === 'tool' && item.status === 'running' ? { ...item, status: 'cancelled' as const } : item,
        );
        next = put(next, -1, {
          kind: 'notice',
          key: `ended:${event.turnId}`,
          level: event.reason === 'aborted' ? 'info' : 'error',
          text: TURN_END_NOTES[event.reason] ?? `The turn ended: ${event.reason}.`,
          at: event.at,
        });
      }
      return {
        ...transcript,
        items: next,
        turn: transcript.turn?.turnId === event.turnId ? undefined : transcript.turn,
      };
    }
    case 'context.compacted':
      return {
        ...transcript,
        items: put(items, -1, {
          kind: 'notice',
          key: `compacted:${event.summaryMessageId}`,
          level: 'info',
          text: 'Older messages were summarised to fit the model’s context.',
          at: event.at,
        }),
      };
    case 'subagent.event': {
      const index = findIndex(items, event.toolCallId);
      const before =
        index === -1
          ? toolItem({ toolCallId: event.toolCallId, toolName: 'task', args: { agent: event.agent } })
          : (items[index] as TranscriptToolCall);
      const child = before.subagent ?? { agent: event.agent, items: [] };
      const inner = applyTranscriptEvent({ items: child.items, turn: undefined, queued: 0 }, event.event);
      return {
        ...transcript,
        items: put(items, index, {
          ...before,
          subagent: { agent: event.agent, childSessionId: event.childSessionId, items: inner.items },
        }),
      };
    }
    default:
      return transcript;
  }
}

/**
 * The items with a turn's streamed text marked as no longer streaming, under a key of its own so
 * that the turn's next text is a new message. Its complete message, when it comes, replaces it
 * by the message's id (the history has it under that id).
 */
function sealStream(items: TranscriptItem[], turnId: string, interrupted = false): TranscriptItem[] {
  const index = findIndex(items, streamKeyOf(turnId));
  const streamed = index === -1 ? undefined : items[index];
  if (streamed?.kind !== 'assistant') return items;
  return put(items, index, {
    ...streamed,
    key: `${streamKeyOf(turnId)}:${index}`,
    streaming: false,
    ...(interrupted ? { interrupted: true } : {}),
  });
}
