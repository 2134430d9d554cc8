import type { WorkerInfo } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';
import { formatPermissionsProblem, workerChangeNotices } from './problem-notices.ts';

const plain = createTerminalStyle(0);
const worker = (changes: Partial<WorkerInfo>): WorkerInfo =>
  ({
    workerId: 'w1',
    name: 'api',
    workdir: '/srv/api',
    state: 'online',
    mcpServers: [{ name: 'github', type: 'http', status: 'connected', tools: [] }],
    ...changes,
  }) as WorkerInfo;

describe('notices about the chat worker', () => {
  it('says nothing at the first look: the notices at start said it', () => {
    expect(
      workerChangeNotices(undefined, { type: 'worker.changed', worker: worker({ state: 'offline' }) }, plain),
    ).toEqual([]);
  });

  it('tells a worker going offline with what to do, and its coming back', () => {
    const offline = worker({ state: 'offline' });
    expect(workerChangeNotices(worker({}), { type: 'worker.disconnected', worker: offline }, plain)).toEqual([
      '! worker api (/srv/api) is offline — prompts wait for it; start it with `molf worker` in that directory or `molf up`',
    ]);
    expect(workerChangeNotices(offline, { type: 'worker.connected', worker: worker({}) }, plain)).toEqual([
      '✓ worker api is online again',
    ]);
  });

  it('tells an MCP server going down with its reason, once, and its coming back', () => {
    const down = worker({
      mcpServers: [{ name: 'github', type: 'http', status: 'offline', reason: '503 from the server', tools: [] }],
    });
    const change = { type: 'worker.changed' as const, worker: down };
    expect(workerChangeNotices(worker({}), change, plain)).toEqual([
      '! MCP server github is offline: 503 from the server — it is retried; check its command or URL in .mcp.json',
    ]);
    expect(workerChangeNotices(down, change, plain)).toEqual([]);
    expect(workerChangeNotices(down, { type: 'worker.changed', worker: worker({}) }, plain)).toEqual([
      '✓ MCP server github is connected again',
    ]);
  });
});

describe('the banner for a broken rules file', () => {
  it('names the line, the column, the sentence and what the gate does meanwhile', () => {
    expect(
      formatPermissionsProblem(
        {
          workerId: 'w1' as WorkerInfo['workerId'],
          file: '/data/workers/w1/permissions.jsonc',
          line: 3,
          column: 3,
          message: 'a comma is missing between two entries',
          fallback: 'last_good_rules',
        },
        plain,
      ),
    ).toBe(
      [
        '⚠ permissions.jsonc is broken at line 3, column 3: a comma is missing between two entries',
        '  /data/workers/w1/permissions.jsonc: the last rules that parsed apply until it is fixed; it is read again when it changes (molf permissions edit opens it)',
      ].join('\n'),
    );
  });
});
