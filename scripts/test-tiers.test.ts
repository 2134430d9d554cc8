import { describe, expect, it } from 'vitest';
import { tierOf } from './test-tiers.ts';

/** Joined at run time: written whole, these samples would put this file itself in another tier. */
const sample = (...parts: string[]) => parts.join('');

describe('tierOf', () => {
  it.each([
    [sample('const child = spawn', "Molf(['up', '--port', '0'], { cwd });"), 'cli'],
    [sample('const result = await execaNode(', "CLI, ['run', 'x']);"), 'cli'],
    [sample('const { terminal } = await chatIn', 'Terminal(scope, []);'), 'cli'],
    [sample('const launcher = execa(LAUN', "CHER, ['server']);"), 'cli'],
    [sample('await using link = await start', 'TestLink();'), 'stack'],
    [sample('const server = await create', 'Server({ port: 0, dataDir, tokens });'), 'stack'],
    [sample('const worker = await create', 'Worker({ serverUrl, token, workdir });'), 'stack'],
    [sample('await using web = await start', 'WebStack();'), 'browser'],
    ["expect(parseShellLine('ls')).toEqual([]);", 'unit'],
    // A TCP server from node:net is no Molf server.
    ['const blocker = createServer((socket) => socket.destroy());', 'unit'],
  ] as const)('puts a test that does `%s` in the %s tier', (source, tier) => {
    expect(tierOf(source)).toBe(tier);
  });
});
