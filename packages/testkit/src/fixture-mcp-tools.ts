import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

const ONE_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** The fixture's tools on a new SDK server (stdio and HTTP fixtures share them). */
export function createFixtureMcpServer(): McpServer {
  /** Tools added at run time, so that they can be removed again. */
  const added = new Map<string, { remove(): void }>();
  const server = new McpServer(
    { name: 'fixture', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );

  server.registerTool(
    'echo',
    { description: 'Echo the text back', inputSchema: { text: z.string() } },
    async ({ text }) => ({
      content: [{ type: 'text', text }],
    }),
  );

  server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'the fixture failed on purpose' }],
    isError: true,
  }));

  server.registerTool('images', { description: 'Two images and a caption', inputSchema: {} }, async () => ({
    content: [
      { type: 'text', text: 'two pictures' },
      { type: 'image', data: ONE_PIXEL_PNG, mimeType: 'image/png' },
      { type: 'image', data: ONE_PIXEL_PNG, mimeType: 'image/png' },
    ],
  }));

  server.registerTool(
    'env',
    { description: 'Read one environment variable', inputSchema: { name: z.string() } },
    async ({ name }) => ({
      content: [{ type: 'text', text: process.env[name] ?? '(unset)' }],
    }),
  );

  server.registerTool(
    'slow',
    { description: 'Wait, unless cancelled', inputSchema: { ms: z.number() } },
    async ({ ms }, extra) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          process.stderr.write('slow was cancelled\n');
          resolve();
        });
      });
      return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
    },
  );

  server.registerTool(
    'add_tool',
    { description: 'Add a tool at run time', inputSchema: { name: z.string() } },
    async ({ name }) => {
      const tool = server.registerTool(
        name,
        { description: `Added at run time: ${name}`, inputSchema: {} },
        async () => ({
          content: [{ type: 'text', text: `hello from ${name}` }],
        }),
      );
      added.set(name, tool);
      server.sendToolListChanged();
      return { content: [{ type: 'text', text: `added ${name}` }] };
    },
  );

  server.registerTool('pid', { description: 'The server process id', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: String(process.pid) }],
  }));

  server.registerTool(
    'remove_tool',
    { description: 'Remove a tool at run time', inputSchema: { name: z.string() } },
    async ({ name }) => {
      const removed = added.get(name);
      removed?.remove();
      added.delete(name);
      return { content: [{ type: 'text', text: removed === undefined ? `no tool ${name}` : `removed ${name}` }] };
    },
  );

  server.registerTool('crash', { description: 'Exit the server process', inputSchema: {} }, async () => {
    setTimeout(() => process.exit(3), 10);
    return { content: [{ type: 'text', text: 'crashing' }] };
  });
  return server;
}
