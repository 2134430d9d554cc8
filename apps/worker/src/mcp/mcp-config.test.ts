// biome-ignore-all lint/suspicious/noTemplateCurlyInString: .mcp.json's own ${VAR} syntax, kept as written
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
      invalid: [],
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

  it('uses a default for a variable that is unset or empty, keeping :, / and spaces in it', () => {
    const result = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          api: {
            url: '${API_URL:-http://127.0.0.1:8080/mcp}',
            headers: { Authorization: 'Bearer ${GITHUB_TOKEN:-none}', 'X-Note': '${EMPTY:-a note: with / and spaces}' },
          },
        },
      }),
      { env: { GITHUB_TOKEN: 'ghp_x', EMPTY: '' }, workdir: '/work/project' },
    );
    expect(result).toEqual({
      ok: true,
      invalid: [],
      servers: [
        {
          name: 'api',
          type: 'http',
          url: 'http://127.0.0.1:8080/mcp',
          headers: { Authorization: 'Bearer ghp_x', 'X-Note': 'a note: with / and spaces' },
        },
      ],
    });
  });

  it('lists a server that needs an unset variable as invalid, naming the server and the variable, and keeps the others', () => {
    const result = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          a: { command: 'run', args: ['${MISSING}', '${MISSING}'], env: { X: '${ALSO_MISSING}', Y: '${SET_EMPTY}' } },
          b: { command: 'run', args: ['${API_KEY}'] },
        },
      }),
      { env: { API_KEY: 'k1', SET_EMPTY: '' }, workdir: '/work/project' },
    );
    expect(result).toEqual({
      ok: true,
      servers: [{ name: 'b', type: 'stdio', command: 'run', args: ['k1'], env: {} }],
      invalid: [
        {
          name: 'a',
          type: 'stdio',
          reason:
            'MCP server "a" cannot start: the environment variables MISSING (in args.0), ALSO_MISSING (in env.X) ' +
            "are not set in the worker's environment: set them and restart the worker, or give a default in .mcp.json (${MISSING:-default})",
        },
      ],
    });
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
