import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionEvent, SessionMessage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { follow, newSession, type Stack, startStack, toolMessages } from '../testing/agent-stack.ts';
import { waitFor } from '../testing/test-link.ts';

const PERMISSIONS = JSON.stringify({ '*': 'ask', read_file: 'allow', shell_exec: 'allow' });

/** 3,000 lines with 2-, 3- and 4-byte characters: more than the 2,000 lines a result may show. */
const LINES = 3_000;
const FULL_TEXT = Array.from({ length: LINES }, (_, index) => `line ${index + 1} é € 😀`).join('\n');
const PRINT_LINES = `for i in $(seq 1 ${LINES}); do echo "line $i é € 😀"; done`;

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('a tiny picture')]);

type ToolMessage = Extract<SessionMessage, { role: 'tool' }>;

function errorOf(error: unknown): { code?: string; field?: string } {
  return (error as { data?: { code?: string; field?: string } }).data ?? {};
}

/** Runs one prompt whose model step makes these calls, then answers; returns the session's tool messages. */
async function runCalls(stack: Stack, calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>) {
  stack.llm.push({ toolCalls: calls });
  stack.llm.push({ text: 'done' });
  const session = await newSession(stack);
  using watch = follow(stack.client, session.sessionId);
  await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'go' });
  await watch.turnEnded();
  return { sessionId: session.sessionId, events: [...watch.events] };
}

async function readAll(stack: Stack, options: { sessionId: string; toolCallId: string; limit: number }) {
  let text = '';
  let offset = 0;
  let pages = 0;
  for (;;) {
    const page = await stack.client.rpc.sessions.toolOutput.query({ ...options, offset });
    expect(page.offset).toBe(offset);
    text += page.text;
    offset += page.bytes;
    pages += 1;
    if (page.done) return { text, pages, totalBytes: page.totalBytes };
  }
}

describe('sessions.toolOutput: the full text of a cut tool output', () => {
  it('records where the full output is and returns all of it in pages, whole characters each', async () => {
    await using stack = await startStack({ permissions: PERMISSIONS });
    const { sessionId, events } = await runCalls(stack, [
      { id: 'call_big', name: 'shell_exec', arguments: { command: PRINT_LINES } },
      { id: 'call_small', name: 'shell_exec', arguments: { command: 'echo small' } },
    ]);
    const [big, small] = (await toolMessages(stack, sessionId, 'shell_exec')).sort((a) =>
      a.role === 'tool' && a.toolCallId === 'call_big' ? -1 : 1,
    ) as ToolMessage[];
    const fullBytes = Buffer.byteLength(`${FULL_TEXT}\n`);
    expect(big).toMatchObject({
      toolCallId: 'call_big',
      truncated: true,
      fullOutput: { path: expect.stringMatching(/^\.molf\/tool-output\/tc_[0-9a-f-]+\.txt$/), bytes: fullBytes },
    });
    expect(small?.fullOutput).toBeUndefined();
    const ended = events.find(
      (event): event is Extract<SessionEvent, { type: 'tool-call.ended' }> =>
        event.type === 'tool-call.ended' && event.toolCallId === 'call_big',
    );
    expect(ended?.fullOutput).toEqual(big?.fullOutput);

    const all = await readAll(stack, { sessionId, toolCallId: 'call_big', limit: 10_000 });
    expect(all.text).toBe(`${FULL_TEXT}\n`);
    expect(all.totalBytes).toBe(fullBytes);
    expect(all.pages).toBe(Math.ceil(fullBytes / 10_000));
    expect(all.text).not.toContain('\uFFFD');
    const whole = await stack.client.rpc.sessions.toolOutput.query({ sessionId, toolCallId: 'call_big' });
    expect(whole).toMatchObject({ offset: 0, bytes: fullBytes, done: true });

    // What cannot be read says why.
    const query = (input: Record<string, unknown>) =>
      stack.client.rpc.sessions.toolOutput.query({ sessionId, toolCallId: 'call_big', ...input } as never);
    await expect(query({ toolCallId: 'call_small' })).rejects.toSatisfy(
      (error) => errorOf(error).code === 'not_found' && /was not cut/.test((error as Error).message),
    );
    await expect(query({ toolCallId: 'call_none' })).rejects.toSatisfy((error) => errorOf(error).code === 'not_found');
    await expect(query({ sessionId: randomUUID() })).rejects.toSatisfy(
      (error) => errorOf(error).code === 'session_not_found',
    );
    await expect(query({ limit: 1024 * 1024 + 1 })).rejects.toSatisfy(
      (error) => errorOf(error).code === 'invalid_input' && errorOf(error).field === 'limit',
    );
    await expect(query({ offset: -1 })).rejects.toSatisfy((error) => errorOf(error).code === 'invalid_input');
    await expect(query({ path: '/etc/passwd', toolCallId: undefined })).rejects.toSatisfy(
      (error) => errorOf(error).code === 'invalid_input',
    );

    // A link planted in place of the file is refused, not followed.
    const spill = join(stack.link.workdir, big?.fullOutput?.path ?? '');
    await writeFile(join(stack.link.workdir, 'secret.txt'), 'SECRET');
    await rename(spill, `${spill}.kept`);
    await symlink(join(stack.link.workdir, 'secret.txt'), spill);
    await expect(query({})).rejects.toSatisfy(
      (error) => errorOf(error).code === 'forbidden' && !(error as Error).message.includes('SECRET'),
    );
    // A deleted file is said to be gone.
    await rm(spill);
    await expect(query({})).rejects.toSatisfy(
      (error) => errorOf(error).code === 'not_found' && /does not exist/.test((error as Error).message),
    );
    await rename(`${spill}.kept`, spill);
    expect((await query({ limit: 5 })).text).toBe('line ');

    // A worker that is gone cannot read it.
    await stack.link.worker.close();
    await waitFor(() => stack.link.server.registry.get(stack.link.worker.workerId)?.state === 'offline', {
      what: 'the worker offline',
    });
    await expect(query({})).rejects.toSatisfy((error) => errorOf(error).code === 'worker_offline');
  });
});

describe('sessions.attachment: the bytes of a tool result’s image', () => {
  it('returns an image read_file returned, and refuses a hash the session’s messages do not name', async () => {
    await using stack = await startStack({ permissions: PERMISSIONS });
    await writeFile(join(stack.link.workdir, 'logo.png'), PNG);
    const other = Buffer.concat([PNG, Buffer.from(' another')]);
    await writeFile(join(stack.link.workdir, 'other.png'), other);
    const first = await runCalls(stack, [{ id: 'call_img', name: 'read_file', arguments: { path: 'logo.png' } }]);
    const second = await runCalls(stack, [{ id: 'call_img', name: 'read_file', arguments: { path: 'other.png' } }]);

    const [read] = (await toolMessages(stack, first.sessionId, 'read_file')) as ToolMessage[];
    const stored = read?.attachments?.[0];
    expect(stored).toMatchObject({ mimeType: 'image/png', size: PNG.length });
    const ended = first.events.find((event) => event.type === 'tool-call.ended');
    expect(ended?.type === 'tool-call.ended' && ended.attachments).toEqual(read?.attachments);
    const attachment = await stack.client.rpc.sessions.attachment.query({
      sessionId: first.sessionId,
      sha256: stored?.sha256 ?? '',
    });
    expect(attachment).toMatchObject({ mimeType: 'image/png', size: PNG.length });
    expect(Buffer.from(attachment.base64, 'base64')).toEqual(await readFile(join(stack.link.workdir, 'logo.png')));

    const [otherRead] = (await toolMessages(stack, second.sessionId, 'read_file')) as ToolMessage[];
    const otherHash = otherRead?.attachments?.[0]?.sha256 ?? '';
    expect(otherHash).not.toBe(stored?.sha256);
    await expect(
      stack.client.rpc.sessions.attachment.query({ sessionId: first.sessionId, sha256: otherHash }),
    ).rejects.toSatisfy((error) => errorOf(error).code === 'not_found' && errorOf(error).field === 'sha256');
    await expect(
      stack.client.rpc.sessions.attachment.query({ sessionId: first.sessionId, sha256: '../meta.json' }),
    ).rejects.toSatisfy((error) => errorOf(error).code === 'invalid_input' && errorOf(error).field === 'sha256');
    await expect(
      stack.client.rpc.sessions.attachment.query({ sessionId: randomUUID(), sha256: otherHash }),
    ).rejects.toSatisfy((error) => errorOf(error).code === 'session_not_found');
  });
});
