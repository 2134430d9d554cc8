import { describe, expect, it } from 'vitest';
import { assignToolNames, MAX_TOOL_NAME_CHARS, qualifyToolName } from './mcp-tool-names.ts';

describe('MCP tool names', () => {
  it.each([
    ['filesystem', 'read_file', 'filesystem_read_file'],
    ['my-github', 'search repos', 'my-github_search_repos'],
    ['a.b', 'c/d:e', 'a_b_c_d_e'],
  ])('qualifies %s + %s as %s', (server, tool, expected) => {
    expect(qualifyToolName(server, tool)).toBe(expected);
  });

  it('shortens names over 64 characters the same way every time, keeping them unique', () => {
    const long = qualifyToolName('server', 'x'.repeat(100));
    expect(long).toHaveLength(MAX_TOOL_NAME_CHARS);
    expect(qualifyToolName('server', 'x'.repeat(100))).toBe(long);
    expect(qualifyToolName('server', `${'x'.repeat(99)}y`)).not.toBe(long);
  });

  it('drops a duplicate within a server, and never lets a tool shadow a built-in or another server', () => {
    const { tools, warnings } = assignToolNames({
      reserved: ['read_file', 'shell_exec'],
      servers: [
        { server: 'read', tools: ['file', 'other'] },
        { server: 'b', tools: ['x y', 'x_y'] },
        { server: 'a', tools: ['b_x_y'] },
      ],
    });
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).not.toContain('read_file');
    expect(names).toContain('a_b_x_y');
    expect(tools.find((tool) => tool.server === 'read' && tool.tool === 'file')?.name).toMatch(
      /^read_file_[0-9a-f]{6}$/,
    );
    expect(tools.filter((tool) => tool.server === 'b')).toHaveLength(1);
    expect(warnings.some((warning) => warning.includes('dropped'))).toBe(true);
    // Deterministic: the same input gives the same names in any order of servers.
    const again = assignToolNames({
      reserved: ['read_file', 'shell_exec'],
      servers: [
        { server: 'a', tools: ['b_x_y'] },
        { server: 'read', tools: ['file', 'other'] },
        { server: 'b', tools: ['x y', 'x_y'] },
      ],
    });
    expect(again.tools).toEqual(tools);
  });

  it('never gives a renamed tool a name another tool already has', () => {
    const first = assignToolNames({
      reserved: [],
      servers: [
        { server: 'a_b', tools: ['c'] },
        { server: 'a', tools: ['b_c'] },
      ],
    });
    const renamed = first.tools.find((tool) => tool.server === 'a_b')?.name ?? '';
    // A server that already has a tool under exactly that renamed name.
    const { tools } = assignToolNames({
      reserved: [],
      servers: [
        { server: 'a', tools: ['b_c', renamed.slice(2)] },
        { server: 'a_b', tools: ['c'] },
      ],
    });
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toHaveLength(3);
  });
});
