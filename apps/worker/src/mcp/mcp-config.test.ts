import { describe, expect, it } from 'vitest';
import { parseMcpConfig } from './mcp-config.ts';

const options = { env: { GITHUB_TOKEN: 'ghp_x', API_KEY: 'k1' }, workdir: '/work/project' };

describe('.mcp.json', () => {
  it('reads stdio and http servers, with variables and WORKDIR interpolated in values but not in env keys', () => {
    const result = parseMcpConfig(
      `{
        // comments are fine
        "mcpServers": {
          "files": { "type": "stdio", "command": "npx", "args": ["-y", "server-filesystem", "\${WORKDIR}"], "env": { "KEY_\${API_KEY}": "\${API_KEY}" } },
          "github": { "type": "http", "url": "https://api.example.com/mcp/", "headers": { "Authorization": "Bearer \${GITHUB_TOKEN}" } },
          "off": { "type": "stdio", "command": "nope", "enabled": false },
        },
      }`,
      options,
    );
    expect(result).toEqual({
      ok: true,
      warnings: [],
      servers: [
        {
          name: 'files',
          type: 'stdio',
          command: 'npx',
          args: ['-y', 'server-filesystem', '/work/project'],
          env: { 'KEY_${API_KEY}': 'k1' },
        },
        {
          name: 'github',
          type: 'http',
          url: 'https://api.example.com/mcp/',
          headers: { Authorization: 'Bearer ghp_x' },
        },
      ],
    });
  });

  it('turns a missing variable into "" with one warning per variable', () => {
    const result = parseMcpConfig(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's own ${VAR} syntax
      '{ "mcpServers": { "a": { "command": "run", "args": ["${MISSING}", "${MISSING}"], "env": { "X": "${ALSO_MISSING}" } } } }',
      options,
    );
    expect(result).toMatchObject({ ok: true, servers: [{ type: 'stdio', args: ['', ''], env: { X: '' } }] });
    expect(result.ok && result.warnings).toEqual([
      'mcpServers.a.args.0: the environment variable MISSING is not set; using ""',
      'mcpServers.a.env.X: the environment variable ALSO_MISSING is not set; using ""',
    ]);
  });

  it('infers the type from command or url when it is left out', () => {
    const result = parseMcpConfig(
      '{ "mcpServers": { "a": { "command": "x" }, "b": { "url": "http://127.0.0.1:9/mcp" } } }',
      options,
    );
    expect(result.ok && result.servers.map((server) => server.type)).toEqual(['stdio', 'http']);
  });

  it.each([
    ['{ "mcpServers": { "a": { "type": "stdio" } } }', 'mcpServers.a.command'],
    ['{ "mcpServers": { "a": { "type": "stdio", "command": "x", "args": "not a list" } } }', 'mcpServers.a.args'],
    ['{ "mcpServers": { "a": { "type": "socket", "path": "/x" } } }', 'mcpServers.a.type'],
    [
      '{ "mcpServers": { "a": { "type": "http", "url": "/relative/mcp" } } }',
      'mcpServers.a.url: "/relative/mcp" is not an absolute http(s) URL',
    ],
    ['{ "mcpServers": { "a": { "type": "stdio", "command": "x", "colour": "red" } } }', 'mcpServers.a'],
    ['{ "mcpServers": { "a": { "type": "stdio", "command": "x" } ', 'line 1, column'],
  ])('names the server and the field of a bad file: %s', (text, expected) => {
    const result = parseMcpConfig(text, options);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toContain(expected);
  });
});
