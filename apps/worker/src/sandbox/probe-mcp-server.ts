/**
 * A stdio MCP server for the sandbox tests: `read_text` reads a file (or says why it cannot),
 * `pid` tells its own process id (small inside a new PID namespace).
 *
 * Run: node probe-mcp-server.ts
 */
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'probe', version: '1.0.0' });
server.registerTool(
  'read_text',
  { description: 'Read a file', inputSchema: { path: z.string() } },
  async ({ path }) => {
    try {
      return { content: [{ type: 'text', text: readFileSync(path, 'utf8') }] };
    } catch (error) {
      return { content: [{ type: 'text', text: `cannot read: ${(error as Error).message}` }] };
    }
  },
);
server.registerTool('pid', { description: 'The server process id', inputSchema: {} }, async () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));
await server.connect(new StdioServerTransport());
