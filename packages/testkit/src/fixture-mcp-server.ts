/**
 * A real MCP server for tests, written with the official SDK, over stdio: echo, a failing tool,
 * images, an environment probe, a slow tool that reports its cancellation on stderr, a tool that
 * adds tools at run time (tools/list_changed) and one that crashes the process.
 *
 * Run: node fixture-mcp-server.ts. With `FIXTURE_MCP_STARTED_FILE` set (in the server's `env`), each start
 * appends one line with its process id there, so a test can tell whether (and how often) it was started.
 */
import { appendFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createFixtureMcpServer } from './fixture-mcp-tools.ts';

const startedFile = process.env.FIXTURE_MCP_STARTED_FILE;
if (startedFile !== undefined && startedFile !== '') appendFileSync(startedFile, `${process.pid}\n`);
const server = createFixtureMcpServer();
process.stderr.write('fixture MCP server ready\n');
await server.connect(new StdioServerTransport());
