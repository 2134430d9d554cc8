import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, createSilentLogger } from '@molf/logging';
import { type Job, type ToolCallId, type ToolResult, toolDefinitions } from '@molf/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReadTracker } from './read-tracker.ts';
import { runToolCall } from './run-tool-call.ts';
import { defineToolHandler, type ToolHandler } from './tool-handler.ts';

let workdir: string;
beforeEach(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'molf-run-'));
});
afterEach(async () => {
  await rm(workdir, { recursive: true, force: true });
});

function toolReturning(result: ToolResult): ToolHandler {
  return defineToolHandler({ definition: toolDefinitions.echo, run: async () => result });
}

function run(handler: ToolHandler, job: Partial<Job> = {}) {
  return runToolCall({
    job: { toolCallId: 'call_x' as ToolCallId, toolName: 'echo', args: { text: '' }, timeoutMs: 5_000, ...job },
    tools: new Map([['echo', handler]]),
    paths: { workdir, extraRoots: [] },
    reads: createReadTracker(),
    controller: new AbortController(),
    logger: createSilentLogger(),
  });
}

const manyLines = Array.from({ length: 3_000 }, (_, index) => `row ${index}`).join('\n');

describe('runToolCall', () => {
  it('cuts an over-long output and keeps the whole of it in the tool-output file', async () => {
    const result = await run(toolReturning({ output: manyLines }));
    expect(result.meta).toMatchObject({ truncated: true, outputId: 'call_x' });
    expect(result.output.split('\n').length).toBeLessThan(2_010);
    expect(await readFile(join(workdir, '.molf', 'tool-output', 'call_x.txt'), 'utf8')).toBe(manyLines);
  });

  it('stays out when the tool handled truncation itself', async () => {
    const result = await run(toolReturning({ output: manyLines, meta: { truncated: false, exitCode: 0 } }));
    expect(result.output).toBe(manyLines);
    expect(result.meta).toEqual({ truncated: false, exitCode: 0 });
  });

  it('keeps the tool’s own meta beside the truncation fields', async () => {
    const result = await run(toolReturning({ output: manyLines, meta: { exitCode: 3 } }));
    expect(result.meta).toMatchObject({ exitCode: 3, truncated: true });
  });

  it('logs one audit line per call with tool, subject, outcome, duration and bytes', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = await createLogger({
      name: 'worker',
      destination: new Writable({
        write(chunk, _encoding, callback) {
          lines.push(JSON.parse(String(chunk)));
          callback();
        },
      }),
    });
    await runToolCall({
      job: {
        toolCallId: 'call_a' as ToolCallId,
        toolName: 'read_file',
        args: { path: 'src/a.ts' },
        timeoutMs: 5_000,
      },
      tools: new Map([
        [
          'read_file',
          defineToolHandler({ definition: toolDefinitions.read_file, run: async () => ({ output: 'hello' }) }),
        ],
      ]),
      paths: { workdir, extraRoots: [] },
      reads: createReadTracker(),
      controller: new AbortController(),
      logger,
    });
    expect(lines).toMatchObject([
      { msg: 'tool call', tool: 'read_file', subject: 'src/a.ts', outcome: 'ok', bytes: 5, truncated: false },
    ]);
    expect(typeof lines[0]?.durationMs).toBe('number');
  });

  it('explains invalid arguments to the model', async () => {
    const result = await run(toolReturning({ output: '' }), { args: { text: 7 } });
    expect(result.meta?.errorKind).toBe('invalid_arguments');
    expect(result.error).toContain('Invalid arguments for echo');
  });
});
