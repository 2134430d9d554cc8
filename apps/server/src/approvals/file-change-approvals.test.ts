import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { Approval, ApprovalEvent, SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { follow, newSession, startStack, toolMessages } from '../testing/agent-stack.ts';
import { createTempDir, startTestLink, TEST_CLIENT_TOKEN, waitFor } from '../testing/test-link.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;

/** Edits and writes ask (a blanket rule), secrets are denied, files other programs run ask by name. */
const EDITS_ASK = `{
  "*": "ask",
  "read_file": { "*": "allow", "secret.txt": "deny" },
  "write_file": { "*": "ask", "*.env": "deny", "package.json": "ask" },
  "edit_file": { "*": "ask", "*.env": "deny", "package.json": "ask" }
}`;

async function clientOf(link: Link): Promise<MolfClient> {
  const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
  await client.ready();
  return client;
}

async function linkWithRules(rules = EDITS_ASK): Promise<Link> {
  const link = await startTestLink();
  await link.server.permissions.writeText(link.worker.workerId, rules);
  return link;
}

function watchApprovals(client: MolfClient) {
  const events: ApprovalEvent[] = [];
  const subscription = client.rpc.approvals.events.subscribe({}, { onData: (event) => events.push(event) });
  return {
    requested: () => events.flatMap((event) => (event.type === 'approval.requested' ? [event.approval] : [])),
    resolved: () => events.flatMap((event) => (event.type === 'approval.resolved' ? [event] : [])),
    [Symbol.dispose]: () => subscription.unsubscribe(),
  };
}

/** Runs a call through the gate as a session's turn would; with `asks`, waits for its approval. */
async function call(link: Link, options: { sessionId: string; tool: string; args: Record<string, unknown> }) {
  const before = new Set(link.server.gate.pending().map((approval) => approval.approvalId));
  const result = link.server.toolCalls.run({ workerId: link.worker.workerId, timeoutMs: 10_000, ...options });
  return {
    result,
    async approval(): Promise<Approval> {
      let found: Approval | undefined;
      await waitFor(
        () => {
          found = link.server.gate.pending().find((candidate) => !before.has(candidate.approvalId));
          return found !== undefined;
        },
        { what: `an approval for ${options.tool}` },
      );
      return found as Approval;
    },
  };
}

describe('edit_file and write_file approvals', () => {
  it('show the worker’s diff of the change, and the result, its event and the stored message carry the same', async () => {
    await using stack = await startStack({
      permissions: EDITS_ASK,
      turns: [
        {
          toolCalls: [
            {
              id: 'call_edit',
              name: 'edit_file',
              arguments: { path: 'notes.txt', oldString: 'two', newString: 'TWO' },
            },
          ],
        },
        { text: 'Edited.' },
      ],
    });
    await writeFile(join(stack.link.workdir, 'notes.txt'), 'one\ntwo\nthree\n');
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'edit it' });

    const asked = () => watch.events.flatMap((event) => (event.type === 'approval.requested' ? [event.approval] : []));
    await waitFor(() => asked().length === 1, { what: 'the approval' });
    const approval = asked()[0] as Approval;
    const diff = '--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n';
    expect(approval).toMatchObject({
      tool: 'edit_file',
      offersAcceptEdits: true,
      preview: { path: 'notes.txt', diff, truncated: false },
    });
    await stack.client.rpc.approvals.approve.mutate({ sessionId: session.sessionId, approvalId: approval.approvalId });
    await watch.turnEnded();

    const ended = watch.events.find(
      (event): event is Extract<SessionEvent, { type: 'tool-call.ended' }> => event.type === 'tool-call.ended',
    );
    expect(ended?.diff).toEqual({ diff, truncated: false });
    const [stored] = await toolMessages(stack, session.sessionId, 'edit_file');
    expect(stored).toMatchObject({ output: 'Edited notes.txt: 1 replacement.', diff: { diff, truncated: false } });
    // The model reads the tool's output, never the diff.
    const toolMessage = stack.llm.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolMessage?.content)).not.toContain('+TWO');
  });

  it('preview a new file from /dev/null, and the tool’s refusal as a note', async () => {
    await using link = await linkWithRules();
    const sessionId = randomUUID();
    await writeFile(join(link.workdir, 'a.txt'), 'abc\n');

    const created = await call(link, { sessionId, tool: 'write_file', args: { path: 'new.md', content: '# New\n' } });
    expect((await created.approval()).preview).toEqual({
      path: 'new.md',
      diff: '--- /dev/null\n+++ b/new.md\n@@ -0,0 +1,1 @@\n+# New\n',
      truncated: false,
    });
    const missing = await call(link, {
      sessionId,
      tool: 'edit_file',
      args: { path: 'a.txt', oldString: 'zzz', newString: 'y' },
    });
    const refused = await missing.approval();
    expect(refused.preview?.diff).toBe('');
    expect(refused.preview?.note).toMatch(/^The call would fail: edit: oldString was not found\./);
    link.server.gate.close();
    await Promise.all([created.result, missing.result]);
  });

  it('deny an edit of a denied path before asking, and never show a file read_file may not read', async () => {
    await using link = await linkWithRules();
    await using client = await clientOf(link);
    using watch = watchApprovals(client);
    const sessionId = randomUUID();
    await writeFile(join(link.workdir, 'app.env'), 'KEY=hunter2\n');
    await writeFile(join(link.workdir, 'secret.txt'), 'the launch code is 0000\n');

    const denied = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId,
      tool: 'edit_file',
      args: { path: 'app.env', oldString: 'hunter2', newString: 'x' },
      timeoutMs: 10_000,
    });
    expect(denied.meta?.errorKind).toBe('permission_denied');
    expect(watch.requested()).toHaveLength(0);

    // edit_file asks for secret.txt, read_file denies it: the person sees the change, not the file.
    const edit = await call(link, {
      sessionId,
      tool: 'edit_file',
      args: { path: 'secret.txt', oldString: '0000', newString: '1234' },
    });
    const approval = await edit.approval();
    expect(approval.preview).toEqual({
      path: 'secret.txt',
      diff: '',
      truncated: false,
      note: 'The read_file rules do not let secret.txt be shown, so no diff is.',
    });
    expect(JSON.stringify(approval)).not.toContain('launch code');
    await client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval.approvalId });
    const result = await edit.result;
    expect(result.output).toBe('Edited secret.txt: 1 replacement.');
    expect(result.diff?.note).toBe('The read_file rules do not let secret.txt be shown, so no diff is.');
    expect(JSON.stringify(result)).not.toContain('launch code');
  });

  it('accept edits for the session: later edits and writes in the workdir run, a deny still denies, a named file and a path outside still ask', async () => {
    await using link = await linkWithRules();
    await using client = await clientOf(link);
    await using outside = await createTempDir('molf-outside-');
    using watch = watchApprovals(client);
    const sessionId = randomUUID();

    const first = await call(link, { sessionId, tool: 'write_file', args: { path: 'a.txt', content: 'one\n' } });
    const approval = await first.approval();
    expect(approval.offersAcceptEdits).toBe(true);
    expect(
      await client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval.approvalId, scope: 'edits' }),
    ).toEqual({ applied: true });
    expect((await first.result).output).toBe('Created a.txt (4 bytes written).');
    await waitFor(() => watch.resolved().length === 1);
    expect(watch.resolved()[0]).toMatchObject({ outcome: 'approved', scope: 'edits' });

    // Without asking: an edit and a new file in a new directory.
    const edited = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId,
      tool: 'edit_file',
      args: { path: 'a.txt', oldString: 'one', newString: 'two' },
      timeoutMs: 10_000,
    });
    expect(edited.output).toBe('Edited a.txt: 1 replacement.');
    expect(edited.diff?.diff).toContain('-one\n+two\n');
    const written = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId,
      tool: 'write_file',
      args: { path: 'src/b.ts', content: 'export {};\n', createDirectories: true },
      timeoutMs: 10_000,
    });
    expect(written.error).toBeUndefined();
    expect(await readFile(join(link.workdir, 'src', 'b.ts'), 'utf8')).toBe('export {};\n');
    expect(watch.requested()).toHaveLength(1);

    // A deny still denies.
    const secret = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId,
      tool: 'write_file',
      args: { path: '.env', content: 'KEY=1\n' },
      timeoutMs: 10_000,
    });
    expect(secret.meta?.errorKind).toBe('permission_denied');

    // A rule naming the file still asks, and so does a path outside the workdir.
    const named = await call(link, { sessionId, tool: 'write_file', args: { path: 'package.json', content: '{}' } });
    expect((await named.approval()).subjects[0]?.rule).toContain('package.json');
    const away = await call(link, {
      sessionId,
      tool: 'write_file',
      args: { path: join(outside.path, 'x.txt'), content: 'x' },
    });
    await away.approval();
    // The client's feed has it a moment after the gate.
    await waitFor(() => watch.requested().length === 3, { what: 'the third approval on the feed' });
    expect(watch.requested().map((asked) => asked.args.path)).toEqual([
      'a.txt',
      'package.json',
      join(outside.path, 'x.txt'),
    ]);

    // Another session still asks for an ordinary edit.
    const other = await call(link, {
      sessionId: randomUUID(),
      tool: 'edit_file',
      args: { path: 'a.txt', oldString: 'two', newString: 'three' },
    });
    await other.approval();
    link.server.gate.close();
    await Promise.all([named.result, away.result, other.result]);
    expect(await readFile(join(link.workdir, 'a.txt'), 'utf8')).toBe('two\n');
  });

  it('accepting edits lets the session’s other waiting edits go ahead', async () => {
    await using link = await linkWithRules();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    const first = await call(link, { sessionId, tool: 'write_file', args: { path: 'a.txt', content: 'a' } });
    const firstApproval = await first.approval();
    const second = await call(link, { sessionId, tool: 'write_file', args: { path: 'b.txt', content: 'b' } });
    await second.approval();
    await client.rpc.approvals.approve.mutate({ sessionId, approvalId: firstApproval.approvalId, scope: 'edits' });
    expect((await first.result).error).toBeUndefined();
    expect((await second.result).output).toBe('Created b.txt (1 bytes written).');
    expect(link.server.gate.pending()).toEqual([]);
  });

  it('refuse "edits" for another tool saying why, and patterns with it, leaving the approval waiting', async () => {
    await using link = await linkWithRules();
    await using client = await clientOf(link);
    const sessionId = randomUUID();
    const shell = await call(link, { sessionId, tool: 'shell_exec', args: { command: 'echo hi' } });
    const approval = await shell.approval();
    expect(approval.offersAcceptEdits).toBe(false);
    expect(approval.preview).toBeUndefined();
    await expect(
      client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval.approvalId, scope: 'edits' }),
    ).rejects.toMatchObject({
      message:
        '"edits" (accept edits for this session) answers only an edit_file or write_file call; this is a shell_exec call: approve it once or for the session instead',
      data: { code: 'invalid_input', field: 'scope' },
    });
    await expect(
      client.rpc.approvals.approve.mutate({
        sessionId,
        approvalId: approval.approvalId,
        scope: 'edits',
        patterns: ['echo *'],
      }),
    ).rejects.toMatchObject({ message: expect.stringContaining('not "edits"') });
    expect(link.server.gate.pending().map((waiting) => waiting.approvalId)).toEqual([approval.approvalId]);
    await client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval.approvalId, scope: 'once' });
    expect((await shell.result).output).toContain('hi');
  });
});
