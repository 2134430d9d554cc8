/**
 * A real MCP server for tests, written with the official SDK, over stdio: echo, a failing tool,
 * images, an environment probe, a slow tool that reports its cancellation on stderr, a tool that
 * adds tools at run time (tools/list_changed) and one that crashes the process.
 *
 * Run: node fixture-mcp-server.ts
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createFixtureMcpServer } from './fixture-mcp-tools.ts';

const server = createFixtureMcpServer();
process.stderr.write('fixture MCP server ready\n');
await server.connect(new StdioServerTransport());
