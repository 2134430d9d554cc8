import {
  type ErrorCode,
  MAX_ATTACHMENT_FETCH_BYTES,
  MolfError,
  type SessionAttachment,
  type SessionInfo,
  type SessionMessage,
  type ToolErrorKind,
  type ToolOutputPage,
  toolOutputIdOf,
} from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { SessionStore } from './session-store.ts';

/** How long the worker has to read one page of a tool's output. */
const READ_OUTPUT_TIMEOUT_MS = 30_000;

/** A worker's failure kinds as the client's error codes. */
const CODE_OF: Partial<Record<ToolErrorKind, ErrorCode>> = {
  not_found: 'not_found',
  worker_offline: 'worker_offline',
  worker_not_found: 'worker_not_found',
  worker_restarted: 'worker_offline',
  timeout: 'timeout',
  cancelled: 'cancelled',
  not_regular_file: 'forbidden',
  permission_denied: 'forbidden',
};

type ToolMessage = Extract<SessionMessage, { role: 'tool' }>;

/**
 * What a session keeps beside its tool results, for clients that show them whole: the full text of
 * a cut output (on the session's worker) and the images and documents (in the store). Only what the
 * session's own history names is ever read: a client names a tool call or a hash, never a path.
 */
export type ToolResultFiles = {
  /** A page of the full output of one of the session's cut tool results, read by its worker. */
  readOutput(options: {
    sessionId: string;
    /** As the session's messages name the call; the newest result of that id when a provider reused one. */
    toolCallId: string;
    offset: number;
    limit: number;
    signal?: AbortSignal | undefined;
  }): Promise<ToolOutputPage>;
  /** The bytes of an attachment of one of the session's tool results. */
  readAttachment(options: { sessionId: string; sha256: string }): Promise<SessionAttachment>;
};

export function createToolResultFiles(options: {
  store: SessionStore;
  dispatcher: Pick<JobDispatcher, 'request'>;
}): ToolResultFiles {
  const { store, dispatcher } = options;

  async function sessionOf(sessionId: string): Promise<SessionInfo> {
    const session = await store.get(sessionId);
    if (session === undefined) {
      throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
    }
    return session;
  }

  async function toolMessages(sessionId: string): Promise<ToolMessage[]> {
    return (await store.messages(sessionId)).filter((message): message is ToolMessage => message.role === 'tool');
  }

  return {
    async readOutput({ sessionId, toolCallId, offset, limit, signal }) {
      const session = await sessionOf(sessionId);
      const message = (await toolMessages(sessionId)).findLast((candidate) => candidate.toolCallId === toolCallId);
      if (message === undefined) {
        throw new MolfError('not_found', `session ${sessionId} has no result of tool call ${toolCallId}`, {
          field: 'toolCallId',
        });
      }
      const outputId = message.fullOutput === undefined ? undefined : toolOutputIdOf(message.fullOutput.path);
      if (outputId === undefined) {
        throw new MolfError(
          'not_found',
          message.truncated === true
            ? `the output of tool call ${toolCallId} was cut, but its full text was not saved`
            : `the output of tool call ${toolCallId} was not cut: the message holds all of it`,
          { field: 'toolCallId' },
        );
      }
      const outcome = await dispatcher.request({
        workerId: session.workerId,
        request: { method: 'tool-output/read', params: { outputId, offset, limit } },
        timeoutMs: READ_OUTPUT_TIMEOUT_MS,
        signal,
      });
      if (!outcome.ok) {
        throw new MolfError(
          CODE_OF[outcome.errorKind] ?? 'internal',
          `cannot read the full output: ${outcome.message}`,
        );
      }
      return outcome.result;
    },

    async readAttachment({ sessionId, sha256 }) {
      await sessionOf(sessionId);
      const attachment = (await toolMessages(sessionId))
        .flatMap((message) => message.attachments ?? [])
        .find((candidate) => candidate.sha256 === sha256);
      if (attachment === undefined) {
        throw new MolfError('not_found', `no tool result of session ${sessionId} has the attachment ${sha256}`, {
          field: 'sha256',
        });
      }
      if (attachment.size > MAX_ATTACHMENT_FETCH_BYTES) {
        throw new MolfError(
          'too_large',
          `the attachment is ${attachment.size} bytes, more than the ${MAX_ATTACHMENT_FETCH_BYTES} one answer carries`,
        );
      }
      const bytes = await store.readAttachment(sessionId, sha256);
      if (bytes === undefined) {
        throw new MolfError('not_found', `the attachment ${sha256} is named by the session but its bytes are gone`);
      }
      if (bytes.byteLength > MAX_ATTACHMENT_FETCH_BYTES) {
        throw new MolfError(
          'too_large',
          `the stored attachment is larger than the ${MAX_ATTACHMENT_FETCH_BYTES} bytes one answer carries`,
        );
      }
      return {
        mimeType: attachment.mimeType,
        size: bytes.byteLength,
        ...(attachment.path === undefined ? {} : { path: attachment.path }),
        base64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
      };
    },
  };
}
