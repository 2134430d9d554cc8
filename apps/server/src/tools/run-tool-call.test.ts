import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolResult } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestLink, waitFor } from '../testing/test-link.ts';
import type { ServerTool, ServerToolContext } from './server-tool.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;

/** A server tool that records its runs; `hang` waits until the call's signal aborts. */
function createClockTool() {
  const runs: Array<{ args: { zone: string; hang?: boolean | undefined }; context: ServerToolContext }> = [];
  const tool: ServerTool<z.ZodObject<{ zone: z.ZodString; hang: z.ZodOptional<z.ZodBoolean> }>> = {
    definition: {
      name: 'clock',
      description: 'Tells the time in a zone.',
      args: z.object({ zone: z.string(), hang: z.boolean().optional() }),
      defaultTimeoutMs: 60_000,
    },
    async run(args, context) {
      runs.push({ args, context });
      if (args.hang === true) {
        await new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason)));
      }
      return { output: `noon in ${args.zone}` };
    },
  };
  return { tool, runs };
}

async function writePermissions(link: Link, text: string): Promise<void> {
  const path = link.server.permissions.pathOf(link.worker.workerId);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text);
}

function run(link: Link, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
  return link.server.toolCalls.run({
    sessionId: 'session-1',
    workerId: link.worker.workerId,
    tool,
    args,
    ...(signal === undefined ? {} : { signal }),
  });
}

describe('runToolCall routes gated calls to the worker or to a server tool', () => {
  it("leaves a server tool that keeps its own time limit running past the call's timeout", async () => {
    const patient: ServerTool<z.ZodObject<Record<string, never>>> = {
      definition: { name: 'patient', description: 'Waits.', args: z.object({}), defaultTimeoutMs: 50 },
      ownsTimeLimit: true,
      async run(_args, context) {
        // Ten times its call timeout: a timeout applied to it would abort it long before.
        await new Promise<void>((resolve, reject) => {
          context.signal.addEventListener('abort', () => reject(new Error('aborted by the call timeout')));
          setTimeout(resolve, 500);
        });
        return { output: 'done in my own time' };
      },
    };
    await using link = await startTestLink({ server: { serverTools: [patient] } });
    await writePermissions(link, '{ "*": "ask", "patient": "allow" }');
    expect(await run(link, 'patient', {})).toEqual({ output: 'done in my own time' });
  });

  it('runs an allowed server tool on the server, with the session and worker of the call', async () => {
    const clock = createClockTool();
    await using link = await startTestLink({ server: { serverTools: [clock.tool] } });
    await writePermissions(link, '{ "*": "ask", "clock": "allow" }');
    const result = await run(link, 'clock', { zone: 'UTC' });
    expect(result).toEqual({ output: 'noon in UTC' });
    expect(clock.runs).toHaveLength(1);
    expect(clock.runs[0]?.context).toMatchObject({ sessionId: 'session-1', workerId: link.worker.workerId });
    // The worker never saw it: nothing was dispatched.
    expect(link.server.dispatcher.pendingCount()).toBe(0);
  });

  it('never runs a server tool the rules deny', async () => {
    const clock = createClockTool();
    await using link = await startTestLink({ server: { serverTools: [clock.tool] } });
    await writePermissions(link, '{ "*": "allow", "clock": "deny" }');
    const result = await run(link, 'clock', { zone: 'UTC' });
    expect(result.meta?.errorKind).toBe('permission_denied');
    expect(clock.runs).toHaveLength(0);
  });

  it('asks a person before a server tool runs when the rules ask, and runs it once approved', async () => {
    const clock = createClockTool();
    await using link = await startTestLink({ server: { serverTools: [clock.tool] } });
    await writePermissions(link, '{ "*": "ask" }');
    const call = run(link, 'clock', { zone: 'CET' });
    await waitFor(() => link.server.gate.pending().length === 1, { what: 'the clock call to ask' });
    expect(clock.runs).toHaveLength(0);
    const [approval] = link.server.gate.pending();
    expect(approval).toMatchObject({ tool: 'clock', args: { zone: 'CET' } });
    await link.server.gate.approve({
      sessionId: 'session-1',
      approvalId: approval?.approvalId ?? '',
      scope: 'once',
      by: { credentialId: 'test', connectionId: 'test' },
    });
    expect(await call).toEqual({ output: 'noon in CET' });
  });

  it("answers a server tool's invalid arguments with a result the model reads, without running it", async () => {
    const clock = createClockTool();
    await using link = await startTestLink({ server: { serverTools: [clock.tool] } });
    await writePermissions(link, '{ "*": "allow" }');
    const result = await run(link, 'clock', { zone: 7 });
    expect(result.meta?.errorKind).toBe('invalid_arguments');
    expect(result.error).toContain('zone');
    expect(clock.runs).toHaveLength(0);
  });

  it('cancels a running server tool when the turn is aborted', async () => {
    const clock = createClockTool();
    await using link = await startTestLink({ server: { serverTools: [clock.tool] } });
    await writePermissions(link, '{ "*": "allow" }');
    const controller = new AbortController();
    const call = run(link, 'clock', { zone: 'UTC', hang: true }, controller.signal);
    await waitFor(() => clock.runs.length === 1, { what: 'the clock tool to start' });
    controller.abort();
    expect((await call).meta?.errorKind).toBe('cancelled');
  });

  it("still runs the worker's own tools on the worker", async () => {
    const clock = createClockTool();
    await using link = await startTestLink({ server: { serverTools: [clock.tool] } });
    await writePermissions(link, '{ "*": "allow" }');
    await writeFile(join(link.workdir, 'notes.txt'), 'from the worker\n');
    const result = await run(link, 'read_file', { path: 'notes.txt' });
    expect(result.output).toContain('from the worker');
    expect(clock.runs).toHaveLength(0);
  });
});
