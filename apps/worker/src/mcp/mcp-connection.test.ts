import { Writable } from 'node:stream';
import { createLogger, createSilentLogger } from '@molf/logging';
import { FIXTURE_MCP_SERVER, startFixtureMcpHttpServer } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { connectMcpServer, toChildEnv } from './mcp-connection.ts';

const FIXTURE = FIXTURE_MCP_SERVER;

async function connectFixture(
  options: {
    env?: NodeJS.ProcessEnv;
    declared?: Record<string, string>;
    onToolsChanged?: () => void;
    onClose?: () => void;
  } = {},
) {
  return connectMcpServer({
    config: { name: 'fixture', type: 'stdio', command: process.execPath, args: [FIXTURE], env: options.declared ?? {} },
    workdir: process.cwd(),
    env: options.env ?? process.env,
    logger: createSilentLogger(),
    onToolsChanged: options.onToolsChanged ?? (() => {}),
    onClose: options.onClose ?? (() => {}),
  });
}

describe('a connection to a real MCP server (stdio)', () => {
  it("lists its tools and calls them: text, errors with the server's text, every image as an attachment", async () => {
    const connection = await connectFixture();
    try {
      const tools = await connection.tools();
      expect(tools.map((tool) => tool.name)).toEqual([
        'echo',
        'fail',
        'images',
        'env',
        'slow',
        'add_tool',
        'pid',
        'remove_tool',
        'crash',
      ]);
      expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
      const signal = new AbortController().signal;
      expect(await connection.call({ tool: 'echo', args: { text: 'hi' }, signal })).toEqual({ output: 'hi' });
      expect(await connection.call({ tool: 'fail', args: {}, signal })).toMatchObject({
        error: '[fixture] the fixture failed on purpose',
        meta: { errorKind: 'internal' },
      });
      const images = await connection.call({ tool: 'images', args: {}, signal });
      expect(images.output).toBe('two pictures');
      expect(images.attachments).toHaveLength(2);
      const [first] = images.attachments ?? [];
      expect(first?.mimeType).toBe('image/png');
      expect(first?.size).toBe(Buffer.from(first?.data ?? '', 'base64').length);
      expect(first?.size).toBeGreaterThan(60);
    } finally {
      await connection.close();
    }
  });

  it('gives the child only PATH, HOME, USER, LANG, TERM, TMPDIR and its declared env', async () => {
    expect(toChildEnv({ PATH: '/bin', SECRET: 'x', HOME: '/h' }, { API_KEY: 'k' })).toEqual({
      PATH: '/bin',
      HOME: '/h',
      API_KEY: 'k',
    });
    const connection = await connectFixture({
      env: { ...process.env, MOLF_SECRET_FOR_TEST: 'leaked' },
      declared: { DECLARED: 'yes' },
    });
    try {
      const signal = new AbortController().signal;
      expect((await connection.call({ tool: 'env', args: { name: 'MOLF_SECRET_FOR_TEST' }, signal })).output).toBe(
        '(unset)',
      );
      expect((await connection.call({ tool: 'env', args: { name: 'DECLARED' }, signal })).output).toBe('yes');
      expect((await connection.call({ tool: 'env', args: { name: 'PATH' }, signal })).output).toBe(process.env.PATH);
    } finally {
      await connection.close();
    }
  });

  it('cancels a running call when its signal aborts, and the server hears of it (notifications/cancelled)', async () => {
    const lines: string[] = [];
    const logger = await createLogger({
      name: 'mcp-test',
      level: 'info',
      console: 'json',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const connection = await connectMcpServer({
      config: { name: 'fixture', type: 'stdio', command: process.execPath, args: [FIXTURE], env: {} },
      workdir: process.cwd(),
      env: process.env,
      logger,
      onToolsChanged: () => {},
      onClose: () => {},
    });
    try {
      const controller = new AbortController();
      const call = connection.call({ tool: 'slow', args: { ms: 30_000 }, signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      expect(await call).toMatchObject({ meta: { errorKind: 'cancelled' } });
      // A deadline, not a budget: generous so that a loaded machine can't fail it.
      const deadline = Date.now() + 120_000;
      while (
        !lines.some((line) => line.includes('MCP [fixture] stderr: slow was cancelled')) &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lines.some((line) => line.includes('MCP [fixture] stderr: slow was cancelled'))).toBe(true);
    } finally {
      await connection.close();
    }
  });

  it('reports tools/list_changed and a crash of the server', async () => {
    let changed = 0;
    let closed = 0;
    const connection = await connectFixture({ onToolsChanged: () => changed++, onClose: () => closed++ });
    const signal = new AbortController().signal;
    await connection.call({ tool: 'add_tool', args: { name: 'late' }, signal });
    const deadline = Date.now() + 120_000;
    while (changed === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(changed).toBeGreaterThanOrEqual(1);
    expect((await connection.tools()).map((tool) => tool.name)).toContain('late');
    await connection.call({ tool: 'crash', args: {}, signal });
    while (closed === 0 && Date.now() < deadline + 5_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toBe(1);
    await connection.close();
  });

  it('speaks Streamable HTTP with the configured headers', async () => {
    await using http = await startFixtureMcpHttpServer({
      requireHeader: { name: 'Authorization', value: 'Bearer t0ken' },
    });
    const connection = await connectMcpServer({
      config: { name: 'remote', type: 'http', url: http.url, headers: { Authorization: 'Bearer t0ken' } },
      workdir: process.cwd(),
      env: process.env,
      logger: createSilentLogger(),
      onToolsChanged: () => {},
      onClose: () => {},
    });
    try {
      expect((await connection.tools()).map((tool) => tool.name)).toContain('echo');
      expect(
        await connection.call({ tool: 'echo', args: { text: 'over http' }, signal: new AbortController().signal }),
      ).toEqual({
        output: 'over http',
      });
    } finally {
      await connection.close();
    }
    await expect(
      connectMcpServer({
        config: { name: 'remote', type: 'http', url: http.url, headers: {} },
        workdir: process.cwd(),
        env: process.env,
        logger: createSilentLogger(),
        onToolsChanged: () => {},
        onClose: () => {},
        connectTimeoutMs: 5_000,
      }),
    ).rejects.toThrow(/401/);
  });

  it('falls back to the older SSE transport when a server only speaks that', async () => {
    await using sseOnly = await startFixtureMcpHttpServer({ sseOnly: true });
    const connection = await connectMcpServer({
      config: { name: 'legacy', type: 'http', url: sseOnly.url, headers: {} },
      workdir: process.cwd(),
      env: process.env,
      logger: createSilentLogger(),
      onToolsChanged: () => {},
      onClose: () => {},
    });
    try {
      expect(
        await connection.call({ tool: 'echo', args: { text: 'over sse' }, signal: new AbortController().signal }),
      ).toEqual({
        output: 'over sse',
      });
    } finally {
      await connection.close();
    }
  });
});
