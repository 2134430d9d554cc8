import { fileURLToPath } from 'node:url';

/** The fixture MCP server script (stdio): run it with `node`. */
export const FIXTURE_MCP_SERVER = fileURLToPath(new URL('./fixture-mcp-server.ts', import.meta.url));
