import { basename } from 'node:path';
import type { SessionMessage, StoredAttachment } from '@molf/protocol';
import type { ModelMessage } from 'ai';
import type { AttachmentSupport } from '../providers/resolve-model.ts';
import { CLEARED_NOTE } from '../sessions/prune-history.ts';

/** How a summary message opens when the model sees it. */
export const SUMMARY_HEADER = '[Summary of the earlier conversation, which is no longer shown]';

/** How nested instructions appear in a read_file result (and how later turns recognise them). */
export const INSTRUCTIONS_MARKER = /^\[Instructions from (.+)\]$/gm;

/**
 * The part of the stored history the model sees: after the latest summary, that summary (and an
 * acknowledgement, so roles alternate) followed by every message after the ones it covers — the
 * recent turns it kept out stay in full.
 */
export function toModelView(history: readonly SessionMessage[]): SessionMessage[] {
  return pairToolResults(withLatestSummary(history));
}

/** What a request shows the model of tool attachments. */
export type AttachmentOptions = {
  support: AttachmentSupport;
  /** The bytes of each attachment shown, base64, by SHA-256; a missing one is said to be missing. */
  media: ReadonlyMap<string, string>;
};

const NO_ATTACHMENTS: AttachmentOptions = {
  support: { images: false, pdf: false, inToolResults: false },
  media: new Map(),
};

/**
 * The stored history as the model sees it. A tool result's images and PDFs are shown to a model that
 * can see them — inside the result where the provider takes them there, else in a user message right
 * after the step's results — and a model that can't is told plainly what it was not shown.
 */
export function toModelMessages(
  messages: readonly SessionMessage[],
  attachments: AttachmentOptions = NO_ATTACHMENTS,
): ModelMessage[] {
  const converted: ModelMessage[] = [];
  let following: UserContentPart[] = [];
  const flushFollowing = () => {
    if (following.length === 0) return;
    converted.push({
      role: 'user',
      content: [{ type: 'text', text: 'Attachments of the tool results above:' }, ...following],
    });
    following = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushFollowing();
    // A result cleared to save context shows neither its text nor its attachments.
    if (message.role === 'tool' && (message.attachments?.length ?? 0) > 0 && message.output !== CLEARED_NOTE) {
      const { result, parts } = toToolResultWithMedia(message, attachments);
      converted.push(result);
      following.push(...parts);
      continue;
    }
    converted.push(toModelMessage(message));
  }
  flushFollowing();
  return converted;
}

type UserContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: string; mediaType: string }
  | { type: 'file'; data: string; mediaType: string; filename?: string };

function kindOf(mimeType: string): 'image' | 'pdf' | 'other' {
  if (mimeType.startsWith('image/')) return 'image';
  return mimeType === 'application/pdf' ? 'pdf' : 'other';
}

function describeAttachment(attachment: StoredAttachment): string {
  const kind = kindOf(attachment.mimeType);
  const what = kind === 'image' ? 'an image' : kind === 'pdf' ? 'a PDF document' : 'a file';
  const size = attachment.size < 1024 ? `${attachment.size} bytes` : `${Math.round(attachment.size / 1024)} KB`;
  return `${what} (${attachment.mimeType}, ${size}${attachment.path === undefined ? '' : `, ${basename(attachment.path)}`})`;
}

/** What the model reads of a tool result: its output, and after it the failure's real text. */
function toolResultText(message: Extract<SessionMessage, { role: 'tool' }>): string {
  if (message.error === undefined) return message.output;
  return message.output === '' ? message.error : `${message.output}\n${message.error}`;
}

/** A tool result with attachments: the text, notes on what is not shown, and the media shown. */
function toToolResultWithMedia(
  message: Extract<SessionMessage, { role: 'tool' }>,
  options: AttachmentOptions,
): { result: ModelMessage; parts: UserContentPart[] } {
  const notes: string[] = [];
  const shown: Array<{ attachment: StoredAttachment; data: string }> = [];
  for (const attachment of message.attachments ?? []) {
    const kind = kindOf(attachment.mimeType);
    const visible = (kind === 'image' && options.support.images) || (kind === 'pdf' && options.support.pdf);
    const data = options.media.get(attachment.sha256);
    if (!visible) {
      notes.push(
        `[Molf: the result has ${describeAttachment(attachment)} that this model cannot see; it was not shown.]`,
      );
    } else if (data === undefined) {
      notes.push(
        `[Molf: the result had ${describeAttachment(attachment)}, but it is no longer stored; it was not shown.]`,
      );
    } else {
      shown.push({ attachment, data });
    }
  }
  const base = toolResultText(message);
  const inline = options.support.inToolResults;
  if (!inline && shown.length > 0)
    notes.push(
      `[Molf: ${shown.length === 1 ? 'the attachment follows' : 'the attachments follow'} in the next message.]`,
    );
  const text = [base, ...notes].filter((part) => part !== '').join('\n');
  const toolCall = { toolCallId: message.toolCallId, toolName: message.toolName };
  if (!inline || shown.length === 0) {
    const output =
      message.error === undefined
        ? { type: 'text' as const, value: text }
        : { type: 'error-text' as const, value: text };
    return {
      result: { role: 'tool', content: [{ type: 'tool-result', ...toolCall, output }] },
      parts: shown.map(({ attachment, data }) => toUserPart(attachment, data)),
    };
  }
  return {
    result: {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          ...toolCall,
          output: {
            type: 'content',
            value: [
              { type: 'text', text },
              ...shown.map(({ attachment, data }) =>
                kindOf(attachment.mimeType) === 'image'
                  ? { type: 'image-data' as const, data, mediaType: attachment.mimeType }
                  : {
                      type: 'file-data' as const,
                      data,
                      mediaType: attachment.mimeType,
                      ...(attachment.path === undefined ? {} : { filename: basename(attachment.path) }),
                    },
              ),
            ],
          },
        },
      ],
    },
    parts: [],
  };
}

function toUserPart(attachment: StoredAttachment, data: string): UserContentPart {
  return kindOf(attachment.mimeType) === 'image'
    ? { type: 'image', image: data, mediaType: attachment.mimeType }
    : {
        type: 'file',
        data,
        mediaType: attachment.mimeType,
        ...(attachment.path === undefined ? {} : { filename: basename(attachment.path) }),
      };
}

/** The attachments a view would show a model that sees images and PDFs (what to load before a step). */
export function attachmentsInView(view: readonly SessionMessage[]): StoredAttachment[] {
  return view.flatMap((message) =>
    message.role === 'tool' && message.output !== CLEARED_NOTE ? (message.attachments ?? []) : [],
  );
}

/** The instruction files a view still shows the model (in read_file results not summarised or pruned away). */
export function instructionFilesShown(view: readonly SessionMessage[]): Set<string> {
  return new Set(
    view.flatMap((message) =>
      message.role === 'tool' && message.toolName === 'read_file'
        ? [...message.output.matchAll(INSTRUCTIONS_MARKER)].map((match) => match[1] as string)
        : [],
    ),
  );
}

function toModelMessage(message: SessionMessage): ModelMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'summary':
      return { role: 'user', content: `${SUMMARY_HEADER}\n\n${message.text}` };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...(message.text === '' ? [] : [{ type: 'text' as const, text: message.text }]),
          ...message.toolCalls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: call.args,
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: message.toolCallId,
            toolName: message.toolName,
            // The model reads a failure's real text (what failed, what to try).
            output:
              message.error === undefined
                ? { type: 'text', value: message.output }
                : { type: 'error-text', value: toolResultText(message) },
          },
        ],
      };
  }
}

/**
 * Every tool call answered right after its assistant message, and no result without its call: a
 * crash between a call and its result (or a provider reusing ids) must not make the history
 * unusable, since providers refuse a call without a result. Missing results read "not run".
 */
function pairToolResults(view: readonly SessionMessage[]): SessionMessage[] {
  const paired: SessionMessage[] = [];
  let open = new Map<string, string>();
  const closeOpen = (at: string) => {
    for (const [toolCallId, toolName] of open) {
      paired.push({
        id: `${toolCallId}-missing`,
        at,
        role: 'tool',
        toolCallId,
        toolName,
        output: '',
        error: 'This tool call has no result: the server stopped before it finished. It may or may not have run.',
        errorKind: 'cancelled',
      });
    }
    open = new Map();
  };
  for (const message of view) {
    if (message.role === 'tool') {
      if (open.delete(message.toolCallId)) paired.push(message);
      continue;
    }
    closeOpen(message.at);
    paired.push(message);
    if (message.role === 'assistant') open = new Map(message.toolCalls.map((call) => [call.toolCallId, call.toolName]));
  }
  closeOpen(new Date().toISOString());
  return paired;
}

function withLatestSummary(history: readonly SessionMessage[]): SessionMessage[] {
  let summaryIndex = -1;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (history[index]?.role === 'summary') {
      summaryIndex = index;
      break;
    }
  }
  if (summaryIndex === -1) return [...history];
  const summary = history[summaryIndex] as Extract<SessionMessage, { role: 'summary' }>;
  // Searched backwards from the summary: what it covers ends just before it, so a turn's cost does
  // not grow with the history's length.
  let covered = -1;
  for (let index = summaryIndex - 1; index >= 0; index -= 1) {
    if (history[index]?.id === summary.coversUntil) {
      covered = index;
      break;
    }
  }
  const acknowledgement: SessionMessage = {
    id: `${summary.id}-ack`,
    at: summary.at,
    role: 'assistant',
    text: 'Understood; I continue from this summary.',
    toolCalls: [],
    model: summary.model,
  };
  return [summary, acknowledgement, ...history.slice(covered + 1).filter((message) => message.role !== 'summary')];
}
