import type { WorkerInfo } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { formatWorkers } from './workers.ts';

const worker = (overrides: Partial<WorkerInfo> = {}): WorkerInfo => ({
  workerId: '00000000-0000-4000-8000-000000000001' as WorkerInfo['workerId'],
  name: 'project',
  workdir: '/home/me/project',
  tools: ['read_file'],
  builtinTools: ['read_file'],
  version: '1.0.0',
  state: 'online',
  connectedAt: '2025-01-01T00:00:00.000Z',
  lastSeenAt: '2025-01-01T00:00:00.000Z',
  ...overrides,
});

const catalog = (overrides: Partial<NonNullable<WorkerInfo['catalog']>> = {}): NonNullable<WorkerInfo['catalog']> => ({
  skills: [
    {
      name: 'deploy',
      description: 'How to deploy this project to staging\nThen check the logs.',
      path: '.agents/skills/deploy/SKILL.md',
      source: '.agents',
    },
  ],
  agents: [
    { name: 'explore', description: 'A read-only explorer', builtin: true },
    { name: 'reviewer', description: 'r'.repeat(300), builtin: false, path: '.agents/agents/reviewer.md' },
  ],
  problems: [],
  ...overrides,
});

const TABLE = [
  'NAME     STATE   SANDBOX  ID                                    WORKDIR           LAST SEEN',
  'project  online  —        00000000-0000-4000-8000-000000000001  /home/me/project  2025-01-01T00:00:00.000Z',
  '',
].join('\n');

describe('formatWorkers', () => {
  it('prints only the table for workers without a catalog', () => {
    expect(formatWorkers([worker()])).toBe(TABLE);
  });

  it("lists below the table an online worker's skills and agents, one line each, built-in ones marked", () => {
    expect(formatWorkers([worker({ catalog: catalog() })])).toBe(
      [
        TABLE,
        'worker project (00000000-0000-4000-8000-000000000001):',
        '  skills (1):',
        '    deploy — How to deploy this project to staging …',
        '  agents (2):',
        '    explore (built-in) — A read-only explorer',
        `    reviewer — ${'r'.repeat(99)}…`,
        '',
      ].join('\n'),
    );
  });

  it('says when an online worker has no skills, and leaves out offline workers', () => {
    const text = formatWorkers([
      worker({ catalog: catalog({ skills: [] }) }),
      worker({ name: 'gone', state: 'offline', catalog: catalog() }),
    ]);
    expect(text).toContain('  skills: none\n');
    expect(text).not.toContain('worker gone');
    expect(text).not.toContain('deploy');
  });

  it('counts the problems and shows the first three with their paths', () => {
    const problems = ['a', 'b', 'c', 'd', 'e'].map((name) => ({
      path: `.agents/skills/${name}/SKILL.md`,
      severity: 'warning' as const,
      message: `no description in ${name}`,
    }));
    const text = formatWorkers([worker({ catalog: catalog({ problems }) })]);
    expect(text).toContain(
      [
        '  problems (5):',
        '    .agents/skills/a/SKILL.md: no description in a',
        '    .agents/skills/b/SKILL.md: no description in b',
        '    .agents/skills/c/SKILL.md: no description in c',
        '    … and 2 more (molf workers --json lists them all)',
        '',
      ].join('\n'),
    );
    expect(text).not.toContain('skills/d/');
  });

  it("lists an online worker's MCP servers with their status, tool count and the reason one is offline", () => {
    const text = formatWorkers([
      worker({
        mcpServers: [
          { name: 'broken', type: 'stdio', status: 'offline', reason: 'spawn nope ENOENT\nmore detail', tools: [] },
          { name: 'fixture', type: 'stdio', status: 'connected', tools: ['fixture_echo', 'fixture_env'] },
          { name: 'new', type: 'http', status: 'awaiting_approval', tools: [] },
        ],
      }),
    ]);
    expect(text).toBe(
      [
        TABLE,
        'worker project (00000000-0000-4000-8000-000000000001):',
        '  mcp servers (3):',
        '    broken: offline — spawn nope ENOENT …',
        '    fixture: connected (2 tools)',
        '    new: awaiting approval',
        '',
      ].join('\n'),
    );
  });
});
