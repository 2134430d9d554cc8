import { createRequire } from 'node:module';
import { createSilentLogger } from '@molf/logging';
import { describe, expect, it } from 'vitest';
import { connectMcpServer } from './mcp-connection.ts';

/** The published reference server of the MCP project, installed from the npm registry as a dev dependency. */
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

describe('a third-party MCP server: @modelcontextprotocol/server-everything over stdio', () => {
  it('lists its tools and calls echo, an image tool and get-env (which shows no secret of the worker) through our client', async () => {
    const connection = await connectMcpServer({
      config: { name: 'everything', type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {} },
      workdir: process.cwd(),
      env: { ...process.env, MOLF_TEST_SECRET: 'do-not-leak' },
      logger: createSilentLogger(),
      onToolsChanged: () => {},
      onClose: () => {},
    });
    try {
      const tools = (await connection.tools()).map((tool) => tool.name);
      expect(tools).toContain('echo');
      const signal = new AbortController().signal;
      const echo = await connection.call({ tool: 'echo', args: { message: 'from molf' }, signal });
      expect(echo.error).toBeUndefined();
      expect(echo.output).toContain('from molf');
      const image = await connection.call({ tool: 'get-tiny-image', args: {}, signal });
      expect(image.attachments?.[0]?.mimeType).toMatch(/^image\//);
      // get-env returns the child's whole environment: our secret must not be in it.
      const env = await connection.call({ tool: 'get-env', args: {}, signal });
      expect(env.output).toContain('PATH');
      expect(env.output).not.toContain('MOLF_TEST_SECRET');
    } finally {
      await connection.close();
    }
  });
});
